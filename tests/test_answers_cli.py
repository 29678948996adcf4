"""`python -m mathcomp_tests answers`: one answer on stdin, read by the suite's own rules."""

from __future__ import annotations

import subprocess
import sys

from helpers.suite_runner import REPO


def cli(stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mathcomp_tests", "answers", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )


def test_prints_the_label_and_the_rule_that_decided_it() -> None:
    out = cli("Therefore Person A spends more time than Person B.", "--format", "cot")
    assert out.returncode == 0, out.stderr
    label, rule = out.stdout.splitlines()
    assert label == "less"
    assert rule == "decided by: after 'therefore': comparison: Person A is the subject"


def test_identity_names_and_the_prompts_option_order() -> None:
    out = cli(
        "The person spends more", "--format", "one-word", "--person-a", "a person", "--person-b", "the woman"
    )
    assert out.stdout.splitlines()[0] == "less"
    out = cli('{"answer": "A"}', "--format", "json", "--options", "A) more\\nB) equal\\nC) less")
    assert out.stdout.splitlines() == ["more", "decided by: json answer field: option letter"]


def test_an_unreadable_answer_prints_invalid_and_why() -> None:
    out = cli("I cannot say more", "--format", "one-word")
    assert out.returncode == 0
    assert out.stdout.splitlines() == ["invalid", "decided by: invalid: negated"]


def test_bad_options_are_a_usage_error_naming_what_was_expected() -> None:
    out = cli("more", "--format", "one-word", "--options", "A=more,B=more,C=equal")
    assert out.returncode == 2
    assert "expected one option per label" in out.stderr
