"""`python -m mathcomp_tests.audit ...`: `mathcomp audit ...` (the code is in cli/audit.py)."""

from .cli import run_alone

if __name__ == "__main__":
    raise SystemExit(run_alone("audit", "python -m mathcomp_tests.audit"))
