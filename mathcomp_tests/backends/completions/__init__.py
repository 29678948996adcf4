"""The completions family: raw ``/v1/completions`` requests to OpenAI-compatible engines (vLLM), batched
and spread over a pool of servers (``backend``, ``batched``, ``pool``, ``servers``, ``streamed``), on an
event loop of their own (``loop_thread``)."""
