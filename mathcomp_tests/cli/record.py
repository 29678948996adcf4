"""`mathcomp record RECORD_DIR --from RUN_DIR [--baseline FILE]` or `mathcomp record RECORD_DIR --stand-in
--model MODEL [--reason TEXT]`: one night's record, RECORD_DIR/<run-id>/, as `mathcomp history` and
`mathcomp site` read it.

--from RUN_DIR, a finished run's folder (reports/latest): its summary.json (the same JSON, written compact),
its report.html where it has one (self-contained: no assets/ beside it), and, when --baseline names a file
that exists, diff.html: the item diff of the run against that baseline, as `mathcomp diff FILE RUN_DIR
--html diff.html` writes it. All three are kept gzipped (summary.json.gz, report.html.gz, diff.html.gz);
`mathcomp site` serves the pages as pages. A diff that cannot be made (another selection, a damaged
baseline) leaves diff.html out, saying why in one line; the record is written. A RUN_DIR without
summary.json is one line, exit 1: the run ended before writing it, and its record is a stand-in. A shard's
run folder (it holds shard.json: `pytest --shard=I/N`) is no night: one line, exit 2, saying to merge the
shards first (`mathcomp merge`, docs/sharding.md) and record the merged folder.

No file of RUN_DIR is read through a symbolic link, wherever it points: a summary.json that is a link is one
line, exit 1; a report.html that is a link is left out of the record, and a results.jsonl that is a link
leaves diff.html out, each with one line naming it.

--stand-in: the record of a run that ended before writing its own summary.json (the job was cancelled,
killed or ran out of memory), so that the night is not lost: a summary.json with a run id as the suite
would have given the run, marked incomplete with the reason and no case, in the format the suite writes
(docs/results.md). `mathcomp history` shows the night as INCOMPLETE.

A record is written whole (its folder filled beside the others, then renamed into place); an existing
record is never replaced: one that holds the same files is said and kept (exit 0), one that differs is an
error (exit 1). Exit status 2: a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..printable import printable
from .command import fail, usage_error

HELP = "one night's record: a finished run's, or a stand-in"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "record_dir", type=Path, metavar="RECORD_DIR", help="the folder of night records (created if missing)"
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--from",
        dest="run_dir",
        type=Path,
        metavar="RUN_DIR",
        default=None,
        help="the finished run to record: its summary.json, report.html and, with --baseline, diff.html",
    )
    which.add_argument(
        "--stand-in",
        action="store_true",
        help="write the stand-in of a run that ended before writing summary.json",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        default=None,
        help="with --from: the baseline the run was compared with; diff.html is made when the file exists",
    )
    parser.add_argument("--model", default=None, help="with --stand-in: the model the run tested, as given")
    parser.add_argument(
        "--reason",
        default=None,
        help="with --stand-in: why the run wrote no summary.json (default: the job ended before it did)",
    )


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.run_dir is not None:
        if args.model is not None or args.reason is not None:
            usage_error(parser, "--model and --reason go with --stand-in, not --from")
        return _from_run(args.record_dir, args.run_dir, args.baseline, parser)
    if not args.stand_in:
        usage_error(
            parser,
            "expected --from RUN_DIR (a finished run) or --stand-in (a run that ended before writing summary.json)",
        )
    if args.baseline is not None:
        usage_error(parser, "--baseline goes with --from, not --stand-in")
    return _stand_in(args, parser)


def _stand_in(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .. import summary_format
    from ..records import results
    from ..run.summary import STAND_IN_REASON, stand_in

    if not (args.model or "").strip():
        usage_error(parser, "--model: expected the model the run tested, got nothing")
    reason = args.reason if (args.reason or "").strip() else STAND_IN_REASON
    run_id = results.new_run_id(args.model)
    folder = args.record_dir / run_id
    try:
        folder.mkdir(parents=True)
    except OSError as exc:
        return fail(f"cannot write a record in {args.record_dir}: {exc.strerror or exc}")
    try:
        path = summary_format.write(folder, stand_in(run_id, args.model, reason))
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        return fail(f"cannot write {folder / results.SUMMARY}: {exc.strerror or exc}")
    print(f"wrote {path}")
    return 0


def _shard_refusal(run_dir: Path, summary: Mapping[str, Any]) -> str | None:
    """Why ``run_dir`` is no night to record (a shard's run folder), in one line naming it; None otherwise."""
    from ..merge import shard_format

    if not (run_dir / shard_format.NAME).exists() and not summary.get("shard"):
        return None
    return (
        f"{run_dir}: a shard's run folder ({shard_format.NAME}); a shard is part of a night, not one: "
        "merge the shards first (mathcomp merge SHARD_DIR... --out DIR, docs/sharding.md) and record DIR"
    )


def _from_run(record_dir: Path, run_dir: Path, baseline: Path | None, parser: argparse.ArgumentParser) -> int:
    from .. import summary_format
    from ..history.fields import load_night
    from ..record import night, packed, plain_files
    from ..records import results
    from ..report.standalone import RunFolderError

    source = run_dir / summary_format.NAME
    if source.is_symlink():
        return fail(f"{source}: {plain_files.LINKED}; expected the run's own {summary_format.NAME}")
    if not source.is_file():
        return fail(
            f"{run_dir}: no {summary_format.NAME} (the run ended before writing it); "
            "record the night with --stand-in --model MODEL"
        )
    try:
        summary = load_night(run_dir)
    except RunFolderError as exc:
        return fail(str(exc))
    if (refused := _shard_refusal(run_dir, summary)) is not None:
        usage_error(parser, printable(refused))
    run_id = str(summary["run_id"])
    if not results.safe_run_id(run_id):
        return fail(f"{source}: run_id {run_id!r} is not one plain folder name")
    target = record_dir / run_id
    try:
        with night.staged(record_dir, run_id) as folder:
            _add_summary(source, folder / summary_format.PACKED)
            _add_report(run_dir / results.REPORT, folder / (night.REPORT + packed.SUFFIX))
            _add_diff(baseline, run_dir, folder / night.DIFF)
            kept = sorted(p.name for p in folder.iterdir())
            settled = night.settle(folder, target)
    except OSError as exc:
        return fail(f"cannot write a record in {record_dir}: {exc.strerror or exc}")
    if settled == night.IDENTICAL:
        print(f"{target}: the record exists and holds the same files; kept")
        return 0
    if settled == night.DIFFERENT:
        return fail(
            f"{target}: a record of run {run_id} exists and differs from {run_dir}'s; kept, not replaced"
        )
    print(f"wrote {target} ({', '.join(kept)})")
    return 0


def _add_summary(source: Path, target: Path) -> None:
    """The run's summary.json gzipped, the same JSON written compact (about half of the file the suite writes
    is indentation); read without following a link."""
    from ..record import packed, plain_files

    summary = json.loads(plain_files.read_bytes(source))
    with open(target, "xb") as written:
        written.write(packed.pack(json.dumps(summary, separators=(",", ":")).encode() + b"\n"))


def _add_report(source: Path, target: Path) -> None:
    """The run's report.html gzipped, when it has one of its own; a line on stderr when it is a link (left
    out)."""
    from ..record import packed, plain_files

    if source.is_symlink():
        print(printable(f"not kept: {source}: {plain_files.LINKED}"), file=sys.stderr)
    elif source.is_file():
        with open(target, "xb") as written:
            written.write(packed.pack(plain_files.read_bytes(source)))


def _add_diff(baseline: Path | None, run_dir: Path, target: Path) -> None:
    """diff.html of ``run_dir`` against ``baseline``, by `mathcomp diff` itself (in this process); a line on
    stderr when it cannot be made."""
    if baseline is None:
        return
    if not baseline.is_file():
        print(printable(f"no diff.html: --baseline {baseline}: no such file"), file=sys.stderr)
        return
    from ..record.plain_files import LINKED
    from ..records import results
    from . import diff

    if (run_dir / results.RESULTS).is_symlink():
        print(printable(f"no diff.html: {run_dir / results.RESULTS}: {LINKED}"), file=sys.stderr)
        return

    parser = argparse.ArgumentParser(prog="mathcomp diff")
    diff.configure(parser)
    args = parser.parse_args(["--html", str(target), "--", str(baseline), str(run_dir)])
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(said):
            code = diff.run(args, parser)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    if code == 0 and target.is_file():
        from ..record import packed

        with open(target.with_name(target.name + packed.SUFFIX), "xb") as written:
            written.write(packed.pack(target.read_bytes()))
        target.unlink()
        return
    target.unlink(missing_ok=True)
    lines = said.getvalue().strip().splitlines() or [f"mathcomp diff ended with status {code}"]
    print(printable(f"no diff.html: {lines[-1]}"), file=sys.stderr)
