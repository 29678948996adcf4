"""`python -m mathcomp_tests.answers ...`: `mathcomp answers ...` (the code is in cli/answers.py)."""

from .cli import run_alone

if __name__ == "__main__":
    raise SystemExit(run_alone("answers", "python -m mathcomp_tests.answers"))
