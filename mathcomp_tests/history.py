"""`python -m mathcomp_tests.history ...`: `mathcomp history ...` (the code is in cli/history.py)."""

from .cli import run_alone

if __name__ == "__main__":
    raise SystemExit(run_alone("history", "python -m mathcomp_tests.history"))
