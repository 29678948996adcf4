"""What REMOTE names: a URL, a path to a repository, or a remote of the repository in the current directory
(resolved to its URL, with the ``http.<url>.extraheader`` settings that authenticate it there)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from . import git

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SCP = re.compile(r"^[^/:]+:")
"""``git@github.com:owner/repo.git``: git's scp-like form (a colon before any slash)."""
_EXTRAHEADER = r"^http\..*\.extraheader$"


@dataclass(frozen=True)
class Remote:
    """Where the branch lives: the ``url`` git is given, how messages ``shown`` it (no credentials), and the
    config the temporary repository takes over from the current one (key, value), never shown."""

    url: str
    shown: str
    config: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def configure(self, git_dir: Path) -> None:
        """Write the carried config into ``git_dir``'s own config file (never on a command line)."""
        for key, value in self.config:
            git.run(["config", "--add", key, value], git_dir=git_dir)


def _is_url(spec: str) -> bool:
    return bool(_URL.match(spec)) or (bool(_SCP.match(spec)) and not Path(spec).exists())


def _local(url: str, base: Path) -> str:
    """A relative path (as a remote of a repository may hold one) made absolute from ``base``."""
    if _is_url(url) or Path(url).is_absolute():
        return url
    return str((base / url).resolve())


def _extraheaders(cwd: Path) -> tuple[tuple[str, str], ...]:
    """The current repository's ``http.*.extraheader`` settings (its includes followed), each hidden."""
    try:
        found = git.run(["config", "--null", "--get-regexp", _EXTRAHEADER], cwd=cwd)
    except git.GitError:  # exit 1: none set
        return ()
    pairs = []
    for entry in found.decode("utf-8", "replace").split("\0"):
        key, _, value = entry.partition("\n")
        if key and value:
            git.hide(value)
            git.hide(value.split()[-1])
            pairs.append((key, value))
    return tuple(pairs)


def resolve(spec: str, cwd: Path) -> Remote:
    """The Remote ``spec`` names, seen from ``cwd``: a URL, else a remote of the repository in ``cwd`` (a
    plain name), else a path; GitError when it is none of them."""
    if _is_url(spec):
        _hide_credentials(spec)
        return Remote(spec, git.redact(spec))
    if "/" not in spec and not spec.startswith("."):
        try:
            url = git.text(["remote", "get-url", spec], cwd=cwd)
            top = Path(git.text(["rev-parse", "--show-toplevel"], cwd=cwd) or cwd)
        except git.GitError as exc:
            if not (cwd / spec).exists():
                raise git.GitError(
                    f"{spec}: not a URL, a path or a remote of the repository in {cwd} ({exc})"
                ) from exc
        else:
            url = _local(url, top)
            _hide_credentials(url)
            return Remote(url, f"{spec} ({git.redact(url)})", _extraheaders(cwd))
    path = str((cwd / spec).resolve())
    return Remote(path, path)


def _hide_credentials(url: str) -> None:
    """The password (or token) of a URL's ``user:password@`` and its query's values are secrets wherever git
    prints them."""
    for value in git.url_secrets(url):
        git.hide(value)
