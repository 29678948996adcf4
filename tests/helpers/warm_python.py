"""Commands that name ``python`` (or a console script of the project) run by the warm parent: the stand-ins
(helpers/warm_shim.py) this writes hand their command line and descriptors to the parent over a socket, and
the parent runs it here, in a forked child, as a fresh interpreter would, less the imports.

Only what a fresh interpreter would run the same way is taken: ``python [-u] -c CODE|-m MODULE|SCRIPT ARGS``,
with the values the preloaded libraries read from the environment as they import unchanged
(``READ_AT_IMPORT``). Anything else is sent back (``refusal``) and the stand-in becomes the real interpreter.
"""

from __future__ import annotations

import io
import json
import os
import runpy
import signal
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SHIM = Path(__file__).with_name("warm_shim.py")
SWITCH = "MATHCOMP_TESTS_WARM"
"""0: no warm parent (helpers/warm_runs.py); ``bare``: one that preloads nothing (helpers/warm_parent.py)."""
READ_AT_IMPORT = (
    "PYTHON", "HF_", "TRANSFORMERS", "TOKENIZERS", "LITELLM", "TORCH", "OMP_", "MKL_", "CUDA", "HYPOTHESIS",
    # matplotlib: its backend, its rc file, and its config and font-cache folders (under HOME unless told)
    "MPL", "MATPLOTLIB", "XDG_", "HOME",
)  # fmt: skip
"""Environment variables the interpreter or a preloaded library reads as it starts: a command whose value
differs from the parent's runs afresh (APPLIED excepted: the child applies them)."""
OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
"""Read as the libraries import in one place alone, huggingface_hub.constants.HF_HUB_OFFLINE (transformers
asks huggingface_hub.is_offline_mode(), which returns it): ``enter`` sets it again from the command's."""
APPLIED = ("PYTHONPATH", "PYTHONUNBUFFERED", *OFFLINE)
UNREAD = ("PYTHON",)
"""Names under READ_AT_IMPORT's prefixes that nothing reads as it starts (a script's choice of interpreter)."""
FLAGS = {"-u"}


@dataclass(frozen=True)
class Command:
    kind: str
    """"-c", "-m" or "script"."""
    target: str
    args: list[str]
    unbuffered: bool


def parsed(argv: list[str]) -> Command | None:
    """``python ARGV`` as a Command, or None where it takes an option this does not run (or none at all)."""
    unbuffered, rest = False, list(argv)
    while rest and rest[0] in FLAGS:
        unbuffered = unbuffered or rest.pop(0) == "-u"
    if not rest:
        return None
    if rest[0] in ("-c", "-m"):
        return Command(rest[0], rest[1], rest[2:], unbuffered) if len(rest) > 1 else None
    if rest[0].startswith("-"):
        return None
    return Command("script", rest[0], rest[1:], unbuffered)


def refusal(
    request: Mapping[str, object], started_with: Mapping[str, str], imported_with: Mapping[str, str]
) -> str | None:
    """Why the parent cannot run ``request`` as a fresh interpreter would, or None where it can: each
    READ_AT_IMPORT value is the one the parent started with, or the one a preloaded library set itself as it
    imported (``imported_with``: torch sets TORCHINDUCTOR_CACHE_DIR, and a process that imported torch
    passes it on)."""
    argv, env = request["argv"], request["env"]
    assert isinstance(argv, list) and isinstance(env, dict)
    if parsed([str(a) for a in argv]) is None:
        return f"an interpreter option the warm parent does not run: {argv[:2]}"
    return environment_refusal(env, started_with, imported_with)


def environment_refusal(
    env: Mapping[str, str], started_with: Mapping[str, str], imported_with: Mapping[str, str]
) -> str | None:
    """The first READ_AT_IMPORT variable whose value in ``env`` is neither the one the process started with nor
    one its preloaded libraries set as they imported, as a reason; None where there is none."""
    for key in sorted(set(env) | set(started_with)):
        read = key.startswith(READ_AT_IMPORT) and key not in APPLIED + UNREAD
        if read and env.get(key) not in (started_with.get(key), imported_with.get(key)):
            return f"{key} differs from the warm parent's"
    return None


FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
"""The signals a stand-in passes on (helpers/warm_shim.py)."""


def dispose(ignored: list[int]) -> None:
    """In the forked child: each signal a stand-in passes on as the interpreter it stands in for starts with
    it, ignored where the stand-in was started ignoring it, else Python's default."""
    for sig in FORWARDED:
        default = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
        signal.signal(sig, signal.SIG_IGN if sig in ignored else default)


def enter(cwd: str, env: dict[str, str], first: str) -> None:
    """In a forked child: take ``cwd`` and ``env`` as a fresh interpreter's, ``first`` first on sys.path and
    PYTHONPATH's entries after it, as the interpreter reads them when it starts."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.path[0] = first
    for entry in reversed(env.get("PYTHONPATH", "").split(os.pathsep)):
        if entry and entry not in sys.path:
            sys.path.insert(1, entry)
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:  # as it reads OFFLINE when it is imported
        constants.HF_HUB_OFFLINE = constants._is_true(env.get(OFFLINE[0]) or env.get(OFFLINE[1]))  # type: ignore[attr-defined]
    _as_hypothesis_imports()
    _as_matplotlib_imports()


def _as_matplotlib_imports() -> None:
    """matplotlib's settings as it reads them when it imports: from a `matplotlibrc` in the working
    directory first, where there is one (its other sources are READ_AT_IMPORT's variables)."""
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is not None and Path("matplotlibrc").is_file():
        matplotlib.rcParams.update(matplotlib.rc_params())


def _as_hypothesis_imports() -> None:
    """What Hypothesis takes as it imports, taken again in this process's working directory and environment:
    the folder it keeps its files in (``.hypothesis`` under the working directory) and its settings profile
    (``ci`` where the environment says a CI service runs, else ``default``)."""
    configuration = sys.modules.get("hypothesis.configuration")
    if configuration is None:
        return
    setattr(configuration, "__hypothesis_home_directory_default", Path.cwd() / ".hypothesis")  # noqa: B010
    setattr(configuration, "__hypothesis_home_directory", None)  # noqa: B010 (module-level dunder names)
    from hypothesis import settings
    from hypothesis._settings import is_in_ci

    settings.load_profile("ci" if is_in_ci() else "default")


def run(command: Command, cwd: str, env: dict[str, str]) -> int:
    """In the forked child, descriptors 0-2 already the command's: run it as `python` would; its exit code."""
    first = {"-c": "", "-m": cwd, "script": str(Path(cwd, command.target).resolve().parent)}[command.kind]
    enter(cwd, env, first)
    unbuffered = command.unbuffered or bool(env.get("PYTHONUNBUFFERED"))
    sys.stdin = io.TextIOWrapper(open(0, "rb", closefd=False))  # noqa: SIM115 (the process's own, as at start)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        binary = open(fd, "wb", buffering=0 if unbuffered else -1, closefd=False)  # noqa: SIM115
        stream = io.TextIOWrapper(
            binary,  # unbuffered: the raw file, as `python -u` writes
            line_buffering=fd == 2 or os.isatty(fd),
            write_through=unbuffered,
            errors="backslashreplace" if fd == 2 else "strict",
        )
        setattr(sys, name, stream)
    try:
        if command.kind == "-c":
            sys.argv = ["-c", *command.args]
            main = type(sys)("__main__")
            sys.modules["__main__"] = main
            exec(compile(command.target, "<string>", "exec"), main.__dict__)
        elif command.kind == "-m":
            sys.argv = [command.target, *command.args]
            runpy.run_module(command.target, run_name="__main__", alter_sys=True)
        else:
            sys.argv = [command.target, *command.args]
            runpy.run_path(command.target, run_name="__main__")
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    return 0


def write_shims(
    folder: Path,
    socket_path: str,
    scripts: dict[str, list[str]],
    only: list[list[str]] | None = None,
    group: bool = False,
) -> dict[str, Path]:
    """A stand-in in ``folder`` for each name of ``scripts`` (name -> what goes before its arguments:
    [] for python itself, [path of the console script] for one); their paths by name. With ``only``, a
    stand-in hands the parent those argument lists alone, and starts every other command afresh. With
    ``group``, one started as a process group's leader passes each signal to its command's whole group
    (helpers/warm_shim.py's GROUP)."""
    source = SHIM.read_text()
    written = {}
    for name, prefix in scripts.items():
        text = (
            source.replace("@REAL@", sys.executable)
            .replace("@SOCKET@", socket_path)
            .replace('"@PREFIX@"', repr(json.dumps(prefix)))
            .replace('"@ONLY@"', repr(json.dumps(only or [])))
            .replace('"@FORWARDED@"', repr(json.dumps([int(sig) for sig in FORWARDED])))
            .replace('"@GROUP@"', repr(json.dumps(group)))
        )
        path = folder / name
        path.write_text(f"#!{sys.executable} -IS\n{text}")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        written[name] = path
    return written
