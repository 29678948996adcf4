"""`python -m mathcomp_tests COMMAND ...`: the `mathcomp` command (the code is in cli/)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main(prog="python -m mathcomp_tests"))
