"""`mathcomp cache stats|prune|clear`: look into the response cache and trim it.

Every action takes --cache-dir and --model after its name (or --cache-dir before it). A damaged cache
file is said in one line; `clear` removes it. A file the commands cannot tell as a cache of their own (by
its application_id, or its one table) is never read into, trimmed or removed: they say so.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sqlite3

from ..rootdir import CACHE_FOLDER, CACHE_VARIABLE, ROOTDIR_HELP
from .command import fail, usage_error

HELP = "the response cache: stats, prune, clear"
CACHE_DIR_HELP = f"the cache folder (default: ${CACHE_VARIABLE}, else {CACHE_FOLDER} in {ROOTDIR_HELP})"
MODEL_HELP = "only this model (as given to --model, or as stored)"
ACTIONS = {
    "stats": "entries per model and revision, and when written",
    "prune": "remove entries written more than DAYS days ago",
    "clear": "remove all entries, or one model's; or a damaged file",
}


def days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of days, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of days, at least 0, got {text}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-dir", default=None, help=CACHE_DIR_HELP)
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION", title="actions")
    for name, text in ACTIONS.items():
        action = actions.add_parser(name, help=text, description=text)
        if name == "prune":
            action.add_argument(
                "--older-than", type=days, required=True, metavar="DAYS", help="age in days; 0 removes all"
            )
        action.add_argument("--model", default=None, help=MODEL_HELP)
        # SUPPRESS: left out here, the value given before the action name stands.
        action.add_argument("--cache-dir", default=argparse.SUPPRESS, help=CACHE_DIR_HELP)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..backends.cache.file import DamagedCacheError, not_ours
    from . import cache_actions as actions

    path = actions.cache_path(args.cache_dir)
    if not path.is_file():
        chosen = (
            "" if args.cache_dir or os.environ.get(CACHE_VARIABLE) else " (the default from here; see --help)"
        )
        usage_error(parser, f"no cache at {path}{chosen}")
    foreign = not_ours(path)
    if foreign is not None:
        return fail(f"{path} is {foreign}; left as it is: move it away, or give --cache-dir a folder of its own")
    clear = f"{parser.prog} clear --cache-dir={shlex.quote(str(path.parent))}"
    try:
        if args.action == "stats":
            print("\n".join(actions.stats(path, args.model)))
            return 0
        removed = actions.delete(path, args.model, args.older_than if args.action == "prune" else None)
    except DamagedCacheError as exc:
        if args.action == "clear" and args.model is None:
            actions.remove(path)
            print(f"removed the damaged cache {path}")
            return 0
        if args.action == "clear":
            return fail(
                f"{exc}; one model's entries cannot be picked out of it: `{clear}` without --model removes it"
            )
        return fail(f"{exc}; `{clear}` removes it (its answers are lost: the next run asks the model again)")
    except sqlite3.Error as exc:
        return fail(f"{path}: {exc}")
    print(f"removed {removed} entries from {path}")
    return 0
