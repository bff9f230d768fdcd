"""Atomic writes: whole new content or the old file, never half a file or a stray temp file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mercury_nb.workspace.atomic import atomic_write_bytes, atomic_write_text


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def test_writes_new_file_with_default_mode(tmp_path: Path) -> None:
    target = tmp_path / "new.txt"
    atomic_write_text(target, "hello\n")
    assert target.read_text() == "hello\n"
    assert _mode(target) == 0o666 & ~_umask()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.txt"]


def test_text_is_written_byte_for_byte(tmp_path: Path) -> None:
    target = tmp_path / "crlf.txt"
    atomic_write_text(target, "a\r\nb\r\n€")
    assert target.read_bytes() == "a\r\nb\r\n€".encode()


@pytest.mark.parametrize(
    "mode", [pytest.param(0o600, id="private"), pytest.param(0o755, id="exec")]
)
def test_overwrite_keeps_the_file_mode(tmp_path: Path, mode: int) -> None:
    target = tmp_path / "script.sh"
    target.write_text("old\n")
    target.chmod(mode)
    atomic_write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert _mode(target) == mode


def test_make_parents_creates_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c.bin"
    atomic_write_bytes(target, b"\x00\x01", make_parents=True)
    assert target.read_bytes() == b"\x00\x01"


def _fail(*_args: object, **_kwargs: object) -> None:
    raise OSError("disk on fire")


def _interrupt(*_args: object, **_kwargs: object) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("function", "replacement", "error"),
    [
        pytest.param("replace", _fail, OSError, id="rename-fails"),
        pytest.param("fsync", _fail, OSError, id="fsync-fails"),
        pytest.param("write", _interrupt, KeyboardInterrupt, id="interrupted-mid-write"),
    ],
)
def test_interrupted_write_leaves_old_content_and_no_temp_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    function: str,
    replacement: object,
    error: type[BaseException],
) -> None:
    target = tmp_path / "data.txt"
    target.write_text("old content\n")
    monkeypatch.setattr(os, function, replacement)
    with pytest.raises(error):
        atomic_write_text(target, "new content that must not land half-way\n" * 1000)
    monkeypatch.undo()
    assert target.read_text() == "old content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.txt"]


def test_failed_first_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "replace", _fail)
    with pytest.raises(OSError):
        atomic_write_text(tmp_path / "never.txt", "x")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []
