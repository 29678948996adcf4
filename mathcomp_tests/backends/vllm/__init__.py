"""vLLM: the engine behind /v1/completions, and the server the suite starts and watches itself."""
