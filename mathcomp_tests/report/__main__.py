"""`python -m mathcomp_tests.report RUN_DIR ...`: `mathcomp report ...` (the code is in cli/report.py)."""

from ..cli import run_alone

if __name__ == "__main__":
    raise SystemExit(run_alone("report", "python -m mathcomp_tests.report"))
