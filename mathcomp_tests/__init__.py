"""mathcomp-tests: a pytest suite that catches directional framing bias in language models."""

from .owncheck import Check as Check

__version__ = "0.1.0"
