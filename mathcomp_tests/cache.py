"""`python -m mathcomp_tests.cache ...`: `mathcomp cache ...` (the code is in cli/cache.py)."""

from .cli import run_alone

if __name__ == "__main__":
    raise SystemExit(run_alone("cache", "python -m mathcomp_tests.cache"))
