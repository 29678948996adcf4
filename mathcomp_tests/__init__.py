"""mathcomp-tests: a pytest suite that catches directional framing bias in language models."""

__version__ = "0.1.0"
