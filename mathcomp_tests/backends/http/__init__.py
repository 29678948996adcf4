"""Backends that talk HTTP to a model server: litellm chat calls (api, router, probe), the server's
liveness, and batched /v1/completions requests for OpenAI-compatible engines."""
