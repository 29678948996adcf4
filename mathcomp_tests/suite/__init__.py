"""The MathComp regression suite: run with `pytest --model=...` from the repository root."""
