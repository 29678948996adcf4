"""The documentation holds together: a short README whose first screen is the two commands, links that
resolve, an options reference that is what the options' declarations render, and the balance bounds the
code keeps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.suite_runner import pytest_process

from mathcomp_tests.data.shortcuts import BOUNDS
from mathcomp_tests.plugin import reference

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
FIRST_SCREEN = 40
COMMANDS = ["make suite", "make test"]
COMMAND_WORDS = ("make", "pytest", "python", "python3", "pip", "mathcomp", "git", "echo")

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`\n]+`")
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")


def fenced_lines(lines: list[str]) -> list[str]:
    """The lines inside fenced code blocks."""
    inside, fenced = [], False
    for line in lines:
        if FENCE.match(line):
            fenced = not fenced
        elif fenced:
            inside.append(line)
    return inside


def is_command(text: str) -> bool:
    first = text.split()[0] if text.split() else ""
    return first.startswith(".venv/bin/") or first.lstrip("$") in COMMAND_WORDS


def test_the_readme_is_at_most_200_lines() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move detail into docs/"


def test_the_readmes_first_screen_holds_exactly_the_two_commands() -> None:
    screen = README.read_text().splitlines()[:FIRST_SCREEN]
    fenced = [line.split("#", 1)[0].strip() for line in fenced_lines(screen)]
    assert [line for line in fenced if line] == COMMANDS
    inline = [span.strip("`") for line in screen for span in INLINE_CODE.findall(line)]
    assert {span for span in inline if is_command(span)} <= set(COMMANDS)
    makefile = (REPO / "Makefile").read_text()
    for command in COMMANDS:
        assert re.search(rf"^{command.split()[1]}:", makefile, re.M), f"the Makefile defines no `{command}`"


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def outside_code(page: Path) -> list[tuple[int, str]]:
    """(line number, line) of every line outside fenced code blocks."""
    kept, fenced = [], False
    for number, line in enumerate(page.read_text().splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            kept.append((number, line))
    return kept


def anchors(page: Path) -> set[str]:
    """Every heading's anchor; a repeated heading gets -1, -2, ... as on GitHub."""
    found: set[str] = set()
    for _, line in outside_code(page):
        if match := re.match(r"#{1,6}\s+(.*)", line):
            base = anchor = slug(match.group(1))
            n = 0
            while anchor in found:
                n += 1
                anchor = f"{base}-{n}"
            found.add(anchor)
    return found


def links(page: Path) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link outside fenced code."""
    return [(number, m.group(1)) for number, line in outside_code(page) for m in LINK.finditer(line)]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for number, target in links(page):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{page.name}:{number}: {target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{page.name}:{number}: {target}: no heading #{anchor} in {resolved.name}")
    assert broken == []


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(README.parent / t.partition("#")[0]).resolve() for _, t in links(README)}
    assert [p.name for p in DOCS.glob("*.md") if p.resolve() not in linked] == []


def test_the_options_reference_is_what_the_declarations_render() -> None:
    page = DOCS / "options.md"
    assert page.read_text() == reference.markdown(), (
        f"docs/options.md differs from the options declared in plugin/options/__init__.py; regenerate it with "
        f"`{reference.REGENERATE}`"
    )


def test_the_declarations_rendered_are_the_ones_pytest_help_shows() -> None:
    out = pytest_process(["--help"], timeout=120).stdout
    section = out.split("MathComp framing-bias suite:", 1)[1].split("\n\n", 1)[0]
    shown = {}
    for entry in re.split(r"\n  (?=--)", "\n" + section)[1:]:
        usage, _, help_text = entry.strip().partition(" ")
        for name in re.findall(r"(?:^|,)(--[\w-]+)", usage):
            shown[name] = "".join(help_text.split())
    declared = {name: "".join(o.help.split()) for o in reference.declared() for name in o.names}
    assert declared == shown


def test_the_balance_bounds_stated_are_the_ones_the_code_keeps() -> None:
    text = (DOCS / "data.md").read_text()
    section = text.split("## Balance bounds", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    stated = [row[1] for row in rows[1:]]
    b = BOUNDS
    low, high = b.amounts
    assert stated == [
        f"<= {b.naive_accuracy:g}",
        f"each <= {b.naive_dir_err:g}; more and less within {b.naive_dir_err_spread:g}",
        f"<= {b.largest_accuracy:g}",
        f"<= {b.largest_agreement:g}",
        f"A and B within {b.derived_gap:.0%} of the label's rows",
        f"within {b.that_gap:.0%}",
        f">= {b.median_operators:g}",
        f"{low}-{high}; exactly three in <= {b.three_amounts_share:.0%}",
        f"each side >= {b.both_sides_share:.0%} of rows",
    ], "docs/data.md's balance bounds differ from Bounds in mathcomp_tests/data/shortcuts.py"
