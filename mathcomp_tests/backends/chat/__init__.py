"""The chat family: a model behind litellm's chat completions (any provider litellm speaks), asked
through a Router (``api``), and the provider and server checked before the first case (``probe``)."""
