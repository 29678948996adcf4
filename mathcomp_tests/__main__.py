"""`python -m mathcomp_tests init`: starter files for another repository (code in init.py)."""

from .init import main

if __name__ == "__main__":
    raise SystemExit(main())
