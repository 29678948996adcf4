"""`python -m mathcomp_tests.audit PATH.csv ...`: the dataset audit (its code lives in data/audit.py)."""

from .data.audit import main

if __name__ == "__main__":
    raise SystemExit(main())
