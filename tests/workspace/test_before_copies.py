"""A tool's first write copies a file's "before" when the start snapshot lacks its bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.workspace.before_copies import BeforeCopies, keep_before_copy
from mercury_nb.workspace.snapshot import take_snapshot
from mercury_nb.workspace.undo_store import get_blob
from tests.workspace.git_repo import committed_repo

LARGE = b"x,y\n" * 1000  # 4,000 bytes: over the snapshot's text bound below


@pytest.mark.parametrize("in_git", [False, True])
def test_copies_what_the_snapshot_lacks_once_while_it_is_as_it_was(
        tmp_path: Path, in_git: bool) -> None:
    root = committed_repo(tmp_path / "ws", {"kept.txt": "small\n"}) if in_git else tmp_path / "ws"
    root.mkdir(exist_ok=True)
    for name in ("big.csv", "moved.csv", "huge.csv"):
        (root / name).write_bytes(LARGE)
    (root / "pic.bin").write_bytes(bytes(range(256)))
    (root / "small.txt").write_text("small\n")
    snapshot = take_snapshot(root, MercuryConfig(workdir=root, snapshot_max_file_bytes=1024))
    (root / "moved.csv").write_bytes(LARGE + b"1,2\n")  # a command changed it meanwhile
    copies, home = BeforeCopies(), tmp_path / "home"

    def keep(rel: str, max_bytes: int = 10_000) -> bool:
        return keep_before_copy(snapshot, copies, home, max_bytes, rel)

    assert keep("big.csv") and not keep("big.csv")  # once
    assert keep("pic.bin")
    assert not keep("small.txt")  # the snapshot has its bytes
    assert not keep("moved.csv")  # no longer what the start measured
    assert not keep("new.txt")  # created by the task: nothing before
    assert not keep("huge.csv", max_bytes=copies.size + 100)  # over what undo may keep
    assert sorted(copies.shas) == ["big.csv", "pic.bin"]
    assert get_blob(home, copies.shas["big.csv"]) == LARGE
    assert copies.size == len(LARGE) + 256


def test_an_ignored_files_state_is_taken_before_its_first_change(tmp_path: Path) -> None:
    from mercury_nb.workspace.before_copies import with_ignored_start

    root = committed_repo(tmp_path / "ws", {".gitignore": ".env\n", "a.txt": "a\n"})
    (root / ".env").write_text("MODE=dev\n")
    snapshot = take_snapshot(root, MercuryConfig(workdir=root))
    assert snapshot.git is not None and ".env" not in snapshot.git.dirty  # git never lists it
    taken = with_ignored_start(snapshot, ".env")
    assert taken.git is not None and taken.git.dirty[".env"] is not None
    assert taken.git.dirty[".env"].text == "MODE=dev\n"
    assert with_ignored_start(taken, ".env") is taken  # once
    assert with_ignored_start(snapshot, "a.txt") is snapshot  # tracked: git has its start
    absent = with_ignored_start(snapshot, "new.env")  # not ignored: untracked files are listed
    assert absent is snapshot


def test_only_the_first_change_of_a_path_is_handled() -> None:
    copies = BeforeCopies()
    assert copies.first("a.csv") and not copies.first("a.csv") and copies.first("b.csv")
