"""Every TOML file the suite reads (prompts, identities, protocols, thresholds) is refused in one line that
names the file and what was expected, whatever is wrong with it: missing, a folder, not readable, not
UTF-8, not TOML. One reader (tomltext.read) says it for all of them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mathcomp_tests.backends.models import named
from mathcomp_tests.config.thresholds import ThresholdsError, load
from mathcomp_tests.prompts import PromptConfigError, load_identities, load_prompt_set
from mathcomp_tests.protocols import load_texts

READERS: dict[str, tuple[Callable[[Path], object], type[Exception], str]] = {
    "prompts": (lambda p: load_prompt_set("hf", p), PromptConfigError, "a TOML file"),
    "identities": (load_identities, PromptConfigError, "a TOML file"),
    "protocols": (load_texts, PromptConfigError, "a TOML file"),
    "thresholds": (lambda p: load(p, named), ThresholdsError, "a thresholds file in TOML"),
}


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Each way a TOML path can be bad, and the part of the message after the path."""
    (tmp_path / "folder.toml").mkdir()
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe\x00bad")
    (tmp_path / "broken.toml").write_text("[table\nkey = 1\n")
    (tmp_path / "a-file").write_text("")
    return {
        "folder": (tmp_path / "folder.toml", "a folder, not a file; expected {expected}"),
        "not UTF-8": (tmp_path / "binary.toml", "not UTF-8 text; expected {expected}"),
        "not TOML": (tmp_path / "broken.toml", "not valid TOML: "),
        "unreadable": (tmp_path / "a-file" / "x.toml", "cannot be read (Not a directory); expected {expected}"),
    }


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("kind", ["folder", "not UTF-8", "not TOML", "unreadable"])
def test_a_bad_toml_file_is_one_line_naming_it_and_what_was_expected(tmp_path: Path, reader: str, kind: str) -> None:
    read, error, expected = READERS[reader]
    path, said = _bad_files(tmp_path)[kind]
    with pytest.raises(error) as info:
        read(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {said.format(expected=expected)}"), message
    assert "\n" not in message.split(": not valid TOML: ")[0]
