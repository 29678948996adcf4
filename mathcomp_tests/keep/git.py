"""One git call, as `mathcomp keep` makes every one: the `git` binary through subprocess, with a timeout,
never a prompt (no terminal, GIT_TERMINAL_PROMPT=0), and what git said with every credential taken out."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ..backends import secrets

LOCAL_S = 60.0
"""A git call that stays on this machine (mktree, commit-tree, archive)."""
NETWORK_S = 180.0
"""A call that talks to the remote (ls-remote, fetch, push)."""
_OWN_REPOSITORY = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")
"""Variables that would point a call at another repository than the one named (a git hook sets them)."""
_ALTERNATES = "GIT_ALTERNATE_OBJECT_DIRECTORIES"
_URL_CREDENTIALS = re.compile(r"""(?i)\b([a-z][a-z0-9+.-]*://)[^\s'"]*@""")
"""A URL's userinfo: everything before the last ``@`` of the URL (a password may hold ``@`` or ``/``)."""
_URL_QUERY = re.compile(r"""(?i)(\b[a-z][a-z0-9+.-]*://[^\s'"?#]*\?)([^\s'"#]*)""")
_AFTER_URL = ":;,.)"
"""Punctuation that ends a URL in a message rather than belonging to it."""
_GITS_OWN_QUERY = ("service=git-upload-pack", "service=git-receive-pack")
"""The query git itself adds to a URL it prints (``info/refs?service=...``): no credential, so shown."""
_OWN_REFS = re.compile(r"^(?:[A-Z]+_)+HEAD$")
"""FETCH_HEAD, ORIG_HEAD, MERGE_HEAD and the like: git's own refs beside HEAD."""


class GitError(RuntimeError):
    """A git call that failed or ran out of time; the message is one line, credentials taken out."""


def hide(value: str) -> None:
    """Treat ``value`` (a token, a header) as a secret from now on: never shown by ``redact``."""
    secrets.hold(value, "credentials")


def _query(found: re.Match[str]) -> str:
    """A URL's query with each value taken out (``?a=1&token=x``: ``?a=<credentials>&token=<credentials>``);
    the punctuation of the text it stands in (``url: what failed``) is left after it."""
    query = found.group(2).rstrip(_AFTER_URL)
    if query in _GITS_OWN_QUERY:
        return found.group(0)
    fields = (f"{key}=<credentials>" if sep else "<credentials>" for key, sep, _ in _fields(query))
    return found.group(1) + "&".join(fields) + found.group(2)[len(query) :]


def _fields(query: str) -> list[tuple[str, str, str]]:
    return [field.partition("=") for field in query.split("&")]


def url_secrets(url: str) -> list[str]:
    """The credentials ``url`` carries: its userinfo's password (or the userinfo, a token alone) and each
    value of its query."""
    found = []
    if (userinfo := _URL_CREDENTIALS.match(url)) is not None:
        user, _, password = userinfo.group(0)[len(userinfo.group(1)) : -1].partition(":")
        found.append(password or user)
    if (query := _URL_QUERY.match(url)) is not None:
        found += [value if sep else key for key, sep, value in _fields(query.group(2))]
    return [value for value in found if value]


def redact(text: str) -> str:
    """``text`` without the credentials of any URL in it (its userinfo, its query's values) or any secret held
    (``hide``, the environment's)."""
    return secrets.redact(_URL_QUERY.sub(_query, _URL_CREDENTIALS.sub(r"\1<credentials>@", text)))


def said(text: str) -> str:
    """What git printed, as one redacted line: its lines joined, git's ``hint:`` lines left out."""
    lines = [line.strip() for line in text.splitlines()]
    kept = [line for line in lines if line and not line.startswith("hint:")]
    return redact("; ".join(kept)) or "(git said nothing)"


def environment() -> dict[str, str]:
    """This process's environment for git: no prompt, and no variable naming another repository."""
    env = {k: v for k, v in os.environ.items() if k not in (*_OWN_REPOSITORY, _ALTERNATES)}
    env.update(GIT_TERMINAL_PROMPT="0", GCM_INTERACTIVE="never", GIT_ASKPASS="", SSH_ASKPASS="")
    return env


def run(
    args: Sequence[str],
    *,
    git_dir: Path | None = None,
    cwd: Path | None = None,
    timeout: float = LOCAL_S,
    stdin: bytes | None = None,
    config: Sequence[str] = (),
) -> bytes:
    """``git ARGS`` (in ``git_dir`` when given, ``config`` as ``-c`` settings), its stdout; GitError naming the
    command when it fails.

    The call has no terminal (a session of its own, stdin from ``stdin`` or nothing), so neither git nor ssh
    can ask for a password: a remote that wants one fails instead."""
    settings = [arg for pair in config for arg in ("-c", pair)]
    command = ["git", *([f"--git-dir={git_dir}"] if git_dir is not None else []), *settings, *args]
    what = f"git {args[0]}"
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=environment(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from exc
    with process:
        try:
            out, err = process.communicate(stdin or b"", timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            os.killpg(process.pid, signal.SIGKILL)  # git and what it started (ssh, git-remote-https)
            process.communicate()
            raise GitError(f"{what} gave no answer within {timeout:g} s") from exc
    if process.returncode != 0:
        raise GitError(f"{what} failed: {said(err.decode('utf-8', 'replace'))}")
    return out


def text(
    args: Sequence[str],
    *,
    git_dir: Path | None = None,
    cwd: Path | None = None,
    timeout: float = LOCAL_S,
    stdin: bytes | None = None,
    config: Sequence[str] = (),
) -> str:
    """``run`` with its stdout as text, stripped."""
    out = run(args, git_dir=git_dir, cwd=cwd, timeout=timeout, stdin=stdin, config=config)
    return out.decode("utf-8", "replace").strip()


def branch_refusal(name: str) -> str | None:
    """Why ``name`` is not a plain branch name to push to (one clause naming it), or None when it is one.

    As ``git check-ref-format --branch`` (no HEAD, no leading ``-``, ``refs/heads/NAME`` a valid ref), also
    refusing ``@`` (HEAD), git's own refs (FETCH_HEAD) and a full ref name (``refs/heads/x``). The name is
    checked as ``refs/heads/NAME``, never expanded (``@{-1}``, a previous branch, is refused as it stands)."""
    if name == "HEAD":
        return f"{name!r} names the checked-out commit, not a branch"
    if _OWN_REFS.match(name):
        return f"{name!r} names one of git's own refs, not a branch"
    if name == "@":
        return f"{name!r} is git's name for HEAD, not a branch"
    if name.startswith("-"):
        return f"{name!r} starts with '-' (it would read as an option)"
    if name.startswith("refs/"):
        rest = name.removeprefix("refs/heads/")
        alone = f" ({rest})" if rest and rest != name else ""
        return f"{name!r} is a full ref name; give the name alone{alone}"
    try:
        run(["check-ref-format", f"refs/heads/{name}"])
    except GitError:
        return f"{name!r} is not a branch name git accepts"
    return None
