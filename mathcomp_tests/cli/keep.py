"""`mathcomp keep NEW_RECORDS --remote REMOTE [--branch mathcomp-history] [--keep-days N] --out ALL_RECORDS`:
the night records kept on a branch of your own repository, where nothing evicts them (a CI cache does).

NEW_RECORDS holds tonight's records, one folder `<run-id>/` each with its summary (as `mathcomp record`
wrote it: summary.json.gz, or a stand-in's summary.json) and, optionally, its report and diff
(report.html.gz, diff.html.gz; plain report.html, diff.html from records written before); other files stay
behind.
The branch is fetched (created, its first commit holding tonight's records, when REMOTE has none), every
record it does not hold yet is added, the nights older than --keep-days (the time in their run id) are
pruned, and the change is one commit, pushed. A record the branch already holds is left as it is, also with
other content (a line says so): records are never rewritten. A folder without a readable summary.json (its
own file, not a link), or whose name is not a run id, is not pushed (one line names it; the others still
are). When another job pushed first, the same additions and pruning are made on the branch's new tip and
pushed again (up to 5 tries). With --keep-days the branch keeps one commit: each push replaces its history
with a commit of the nights kept (over the tip it was built on, never over another job's push), so that a
clone holds the kept window, not every night ever pushed. Then ALL_RECORDS is replaced whole by every
record the branch holds, for `mathcomp history ALL_RECORDS`.

The branch holds night records alone: folders named as run ids, each holding the files of a record, as
keep writes them. A branch that holds anything else (a file
beside the records, another folder, another file in a record: a code branch such as main, named by
mistake) is refused before anything is pushed, and only a record is ever pruned. --branch is a plain
branch name: not HEAD, @ or another of git's own refs (FETCH_HEAD), not a name starting with '-', not a
full ref name (refs/heads/x: give x), and one `git check-ref-format` accepts. --keep-days goes back at
most as far as a date does, to 1 January of the year 1 (about 740,000 days).

REMOTE is a git URL, a path to a repository, or the name of a remote of the repository in the current
directory (in GitHub Actions: origin, authenticated by the token actions/checkout left in its config; the
job needs `contents: write`). Git runs in a temporary repository of its own, never in your checkout, and
never asks for a password: a remote that wants one fails. Every line keep prints has the credentials taken
out: a URL's userinfo (`user:token@`) and the values of its query (`?access_token=...`) are shown as
`<credentials>`. Commits are by mathcomp-tests <mathcomp-tests@users.noreply.github.com> unless
GIT_AUTHOR_NAME, GIT_COMMITTER_NAME and the rest say otherwise.

Exit status: 0 done (also when nothing was new); 1 git or the remote failed (one line naming the remote and
what git said, credentials taken out) or ALL_RECORDS could not be written; 2 a usage error (NEW_RECORDS
missing, a bad --keep-days or --branch, a branch that holds anything but night records, an --out that
holds other files).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
from pathlib import Path

from ..listing import few
from ..printable import printable
from .command import fail, usage_error

HELP = "keep the night records on a git branch, and write them all out"
DEFAULT_BRANCH = "mathcomp-history"


def _most_days() -> int:
    """The longest --keep-days: as far back as a date goes from today, to 1 January of the year 1."""
    return (dt.date.today() - dt.date.min).days


def _days(text: str) -> int:
    """--keep-days: a whole number of days, 0 to ``_most_days()``."""
    try:
        days = int(text)
    except ValueError:
        days = -1
    if days < 0:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of days at least 0 (0: keep every night), got {text!r}"
        )
    if days > (most := _most_days()):
        raise argparse.ArgumentTypeError(
            f"expected at most {most} days (back to 1 January of the year 1; 0 keeps every night), got {text!r}"
        )
    return days


def _shown(text: str) -> str:
    """``text`` as keep prints it: credentials taken out (a URL's userinfo and query, every secret held),
    control characters escaped."""
    from ..keep import git

    return printable(git.redact(text))


def _say(text: str, *, error: bool = False) -> None:
    """One line of what keep prints, on stdout (stderr when ``error``), as ``_shown``."""
    print(_shown(text), file=sys.stderr if error else sys.stdout)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "new_records",
        type=Path,
        metavar="NEW_RECORDS",
        help="tonight's records: a folder of <run-id>/ folders",
    )
    parser.add_argument(
        "--remote", required=True, help="a git URL, a repository's path, or a remote's name (origin)"
    )
    parser.add_argument(
        "--branch",
        default=DEFAULT_BRANCH,
        help=f"the branch that holds the records (default: {DEFAULT_BRANCH})",
    )
    parser.add_argument(
        "--keep-days",
        type=_days,
        default=0,
        metavar="N",
        help="prune the nights older than N days (default 0: keep every night)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="ALL_RECORDS",
        help="the folder to write every record of the branch to (replaced whole)",
    )


def _check(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Every usage error, found before git is asked anything."""
    from ..keep import export, git

    if not args.new_records.is_dir():
        usage_error(parser, f"{args.new_records}: no such folder; expected a folder of night records")
    if (refused := git.branch_refusal(args.branch)) is not None:
        usage_error(
            parser, _shown(f"--branch: {refused}; expected a plain branch name, such as {DEFAULT_BRANCH}")
        )
    new, out = args.new_records.resolve(), args.out.resolve()
    if new == out or new in out.parents or out in new.parents:
        usage_error(parser, f"--out {args.out}: expected a folder apart from NEW_RECORDS {args.new_records}")
    if (held := export.foreign(args.out)) is not None:
        usage_error(
            parser, f"--out {printable(held)}; expected a folder of night records to replace, or none"
        )


def _refuse_branch(parser: argparse.ArgumentParser, branch: str, shown: str, stray: str) -> None:
    """The usage error for a branch that holds ``stray``, not a night record: nothing was pushed."""
    usage_error(
        parser,
        _shown(
            f"--branch {branch}: {branch} on {shown} holds {stray}; expected a branch of night records only "
            "(<run-id>/ folders holding a summary, and its report and diff), "
            f"such as {DEFAULT_BRANCH}, or a branch that is not there yet"
        ),
    )


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..keep import export, git, nights, push, remote

    _check(args, parser)
    new = nights.read_new(args.new_records, lambda line: _say(line, error=True))
    try:
        where = remote.resolve(args.remote, Path.cwd())
    except git.GitError as exc:
        return fail(_shown(str(exc)))
    with tempfile.TemporaryDirectory(prefix="mathcomp-keep-") as work:
        git_dir = Path(work) / "repo.git"
        try:
            git.run(["init", "--quiet", "--bare", str(git_dir)])
            where.configure(git_dir)
            kept = push.keep(git_dir, where, args.branch, new, args.keep_days, _say)
        except git.GitError as exc:
            return fail(_shown(f"{where.shown}: {exc}"))
        except push.NotRecords as exc:
            _refuse_branch(parser, args.branch, where.shown, str(exc))
        plan = kept.plan
        for run_id in plan.differing:
            _say(
                f"kept as it is: {run_id} is on {args.branch} with other content; "
                "records are never rewritten, so this copy was not pushed",
                error=True,
            )
        for run_id in plan.too_old:
            _say(f"not kept: {run_id} is older than {args.keep_days} days", error=True)
        if kept.pushed:
            pruned = f", pruned {len(plan.pruned)} ({few(plan.pruned)})" if plan.pruned else ""
            _say(
                f"pushed {args.branch} to {where.shown}: added {len(plan.added)} ({few(plan.added)}){pruned}"
            )
        else:
            _say(f"nothing new for {args.branch} on {where.shown}")
        try:
            count = export.write(git_dir, kept.tip, args.out)
        except (OSError, git.GitError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            return fail(_shown(f"cannot write {args.out}: {reason}"))
    _say(f"wrote {args.out}: {count} night records")
    return 0
