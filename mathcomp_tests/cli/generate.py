"""`mathcomp generate --n N --seed S [--labels balanced|paper] > out.csv`: fresh scenarios.

Rows in the dataset schema, byte-identical for the same seed and options. --fixtures writes the bundled
300 instead (the paper's exact distributions).
"""

from __future__ import annotations

import argparse
import sys

from ..data.generated_sets import FIXTURE_SEED

HELP = "write fresh scenarios as a dataset CSV"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=int, default=300, help="how many scenarios (default 300)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--labels",
        choices=("balanced", "paper"),
        default="balanced",
        help="labels in equal thirds (default) or in the paper's proportions (equal 94 / less 119 / more 87)",
    )
    parser.add_argument(
        "--fixtures",
        action="store_true",
        help="the bundled set: 300 rows with the paper's exact distributions "
        f"(fixtures/scenarios.csv is --fixtures --seed {FIXTURE_SEED})",
    )


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..data import generate, generated_sets

    if args.n < 1:
        parser.error(f"--n must be at least 1, got {args.n}")
    rows = (
        generated_sets.fixtures(args.seed)
        if args.fixtures
        else list(generated_sets.balanced(args.n, args.seed, args.labels))
    )
    sys.stdout.write(generate.to_csv(rows))
    return 0
