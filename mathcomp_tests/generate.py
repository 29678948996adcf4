"""`python -m mathcomp_tests.generate ...`: `mathcomp generate ...` (the code is in cli/generate.py)."""

from .cli import run_alone

if __name__ == "__main__":
    raise SystemExit(run_alone("generate", "python -m mathcomp_tests.generate"))
