"""`python -m mathcomp_tests.cache stats|prune --older-than DAYS|clear [--model M]`.

The code lives in backends/cache_admin.py.
"""

from .backends.cache_admin import main

if __name__ == "__main__":
    raise SystemExit(main())
