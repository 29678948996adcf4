"""The options reference (docs/options.md), rendered from the declarations `pytest --help` shows.

``options.add`` registers every option; here it registers them with a recorder instead of pytest's parser,
so the page holds the very names and help texts pytest prints. Regenerate the page with
``python -m mathcomp_tests.plugin.reference > docs/options.md``; tests/test_docs.py fails when it differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from . import options

PAGE = "docs/options.md"
REGENERATE = f"python -m mathcomp_tests.plugin.reference > {PAGE}"

HEADER = f"""\
# Options reference

<!-- Generated from mathcomp_tests/plugin/options/__init__.py by `{REGENERATE}`; do not edit by hand:
tests/test_docs.py fails when this page and the options differ. -->

Every option the suite adds to pytest, in the order and words of `pytest --help` (run from this
repository's root; where the suite is installed as a package, `pytest --pyargs mathcomp_tests.suite --help`).
Lists are comma-separated, and `all` selects every value. Write options with `=` (`--reports-dir=/tmp/r`):
pytest looks for its root directory among the bare arguments before the plugin's options are known.
A number out of range (`--max-new-tokens=0`, `--max-error-rate=2`) or not finite (`--max-error-rate=nan`,
`--request-timeout=inf`) is a usage error (exit code 4) naming the option and the range it takes, never
silently replaced; so is `$MATHCOMP_PROGRESS_DELAY` (seconds, at least 0) when it is set.

The suite also takes other plugins' options: `-n N` (pytest-xdist, [models and backends](models.md)),
`-m` with the suite's markers ([choosing the cases](selecting-cases.md)), `--hypothesis-seed`
(Hypothesis, [the data](data.md)) and `--junitxml` ([CI](ci.md)).

What the options do, by topic: [choosing the cases](selecting-cases.md), [models and backends](models.md),
[the response cache](cache.md), [reading answers](reading-answers.md),
[statistics and gates](statistics-and-gates.md), [cue invariance and protocols](cue-invariance-and-protocols.md),
[the data](data.md), [fidelity to the paper](fidelity.md).

| option | takes | what it does |
|---|---|---|
"""


@dataclass(frozen=True)
class Declared:
    """One ``addoption`` call: the option's names and its keyword arguments."""

    names: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def help(self) -> str:
        return str(self.attrs.get("help", ""))


class _Recorder:
    """Takes the place of pytest's parser and of its option group in ``options.add``."""

    def __init__(self) -> None:
        self.declared: list[Declared] = []

    def getgroup(self, name: str, description: str = "") -> _Recorder:
        return self

    def addoption(self, *names: str, **attrs: Any) -> None:
        self.declared.append(Declared(tuple(names), attrs))


def declared() -> list[Declared]:
    """Every suite option, in the order ``pytest --help`` lists them."""
    recorder = _Recorder()
    options.add(cast(pytest.Parser, recorder))
    return recorder.declared


def takes(option: Declared) -> str:
    """What follows the option on the command line, in words."""
    attrs = option.attrs
    if attrs.get("action") in ("store_true", "store_false"):
        return "nothing (a switch)"
    if attrs.get("nargs") == "?":
        return f"optionally `={attrs.get('metavar', 'VALUE')}`"
    if attrs.get("choices"):
        return "one of " + ", ".join(f"`{c}`" for c in attrs["choices"])
    kind = attrs.get("type")
    if kind is int:
        return "a whole number"
    if kind is float:
        return "a number"
    return "text"


def _cell(text: str) -> str:
    """Markdown table cell: pipes escaped, angle brackets shown rather than taken for HTML."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def markdown(found: Sequence[Declared] | None = None) -> str:
    """The whole page: the fixed header, then one row per option."""
    rows = [
        f"| {', '.join(f'`{n}`' for n in option.names)} | {takes(option)} | {_cell(option.help)} |"
        for option in (declared() if found is None else found)
    ]
    return HEADER + "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
