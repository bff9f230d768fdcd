"""What a task keeps for undo, and applying a plan with a compare-and-swap per file."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.undo_plan import LEFT_NOT_KEPT, TOO_LARGE, FileStates, Ran, plan_undo
from mercury_nb.workspace.changes import measure_changes
from mercury_nb.workspace.snapshot import take_snapshot
from mercury_nb.workspace.undo_apply import NOT_IN_STORE, apply_plan
from mercury_nb.workspace.undo_store import (
    NOT_KEPT_BINARY,
    KeptFile,
    TaskStates,
    current_hash,
    get_blob,
    keep_task_states,
    load_states,
    prune_store,
    put_blob,
    save_states,
    undo_dir,
)

BINARY = b"\x00\x01\x02binary\xff"


def _kept(root: Path, home: Path, change: object, max_bytes: int = 1_000_000) -> TaskStates:
    """Snapshot ``root``, run ``change`` on it, keep the states as a task's end does."""
    snapshot = take_snapshot(root, MercuryConfig(workdir=root))
    change(root)  # type: ignore[operator]
    return keep_task_states(snapshot, measure_changes(snapshot, root), home, "t1", max_bytes)


def _edit(root: Path) -> None:
    (root / "a.txt").write_text("task\n")
    (root / "big.txt").write_text("y" * 3000)
    (root / "pic.bin").write_bytes(BINARY + b"more")
    (root / "new.txt").write_text("new\n")


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    (root / "big.txt").write_text("x" * 3000)
    (root / "pic.bin").write_bytes(BINARY)
    return root


def test_content_mode_keeps_text_within_the_budget_and_says_why_not(tmp_path: Path) -> None:
    root, home = _workspace(tmp_path), tmp_path / "home"
    states = _kept(root, home, _edit, max_bytes=1000)
    files = states.files
    assert files["a.txt"].unkept is None and files["new.txt"].before is None
    assert files["big.txt"].unkept == TOO_LARGE
    assert files["pic.bin"].unkept == NOT_KEPT_BINARY
    assert load_states(home, "t1") == states
    assert files["a.txt"].end == current_hash(root, "a.txt")


def test_a_file_over_what_the_snapshot_keeps_is_named_too_large(tmp_path: Path) -> None:
    """Outside git, a file's "before" is the text the start snapshot kept, up to
    ``snapshot_max_file_bytes``: a larger one is named too large to keep, not unreadable."""
    root, home = _workspace(tmp_path), tmp_path / "home"
    snapshot = take_snapshot(root, MercuryConfig(workdir=root, snapshot_max_file_bytes=2048))
    (root / "big.txt").write_text("y" * 3000)
    states = keep_task_states(snapshot, measure_changes(snapshot, root), home, "t1", 1_000_000)
    assert states.files["big.txt"].unkept == (
        "too large to keep outside git (over the 2,048 bytes of a file the start snapshot "
        "keeps: MERCURY_SNAPSHOT_MAX_FILE_BYTES)")


def test_git_mode_keeps_binary_files_from_the_baseline(tmp_path: Path) -> None:
    root, home = _workspace(tmp_path), tmp_path / "home"
    for args in (["init", "-q"], ["add", "."],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "s"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    states = _kept(root, home, _edit)
    assert states.files["pic.bin"].unkept is None
    plan = plan_undo(tuple(FileStates(p, f.before, f.end, current_hash(root, p), f.unkept)
                           for p, f in states.files.items()), Ran())
    done = apply_plan(plan, root, home)
    assert sorted(done.restored) == ["a.txt", "big.txt", "new.txt", "pic.bin"]
    assert (root / "pic.bin").read_bytes() == BINARY and not (root / "new.txt").exists()


def test_a_file_changed_between_plan_and_write_is_left_and_named(tmp_path: Path) -> None:
    root, home = _workspace(tmp_path), tmp_path / "home"
    states = _kept(root, home, _edit)
    plan = plan_undo(tuple(FileStates(p, f.before, f.end, current_hash(root, p), f.unkept)
                           for p, f in states.files.items()), Ran())
    (root / "a.txt").write_text("the user, meanwhile\n")  # after the plan, before the write
    done = apply_plan(plan, root, home)
    assert ("a.txt", "left as is: a.txt changed after the task (yours?)") in done.left
    assert (root / "a.txt").read_text() == "the user, meanwhile\n"
    assert "a.txt" not in done.restored and "new.txt" in done.restored


def test_a_blob_gone_from_the_store_is_named(tmp_path: Path) -> None:
    root, home = _workspace(tmp_path), tmp_path / "home"
    states = _kept(root, home, _edit)
    for blob in (undo_dir(home) / "blobs").iterdir():
        blob.unlink()
    a = states.files["a.txt"]
    plan = plan_undo((FileStates("a.txt", a.before, a.end, a.end, a.unkept),), Ran())
    done = apply_plan(plan, root, home)
    assert done.left == [("a.txt", LEFT_NOT_KEPT.format(path="a.txt", why=NOT_IN_STORE))]
    assert (root / "a.txt").read_text() == "task\n"


def test_a_resumed_run_keeps_the_first_before(tmp_path: Path) -> None:
    root, home = _workspace(tmp_path), tmp_path / "home"
    first = _kept(root, home, _edit)

    def again(folder: Path) -> None:
        (folder / "a.txt").write_text("second run\n")

    second = _kept(root, home, again)  # a later run's snapshot starts from the task's edits
    assert second.files["a.txt"].before == first.files["a.txt"].before
    assert second.files["a.txt"].end == current_hash(root, "a.txt")
    assert set(second.files) >= set(first.files)


def test_the_store_inside_the_workspace_is_never_a_change(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    snapshot = take_snapshot(root, MercuryConfig(workdir=root))
    _edit(root)
    keep_task_states(snapshot, measure_changes(snapshot, root), root / "home", "t1", 10**6)
    assert any((root / "home").rglob("*"))  # the store was written inside the workspace
    paths = [change.path for change in measure_changes(snapshot, root).changes]
    assert paths == ["a.txt", "big.txt", "new.txt", "pic.bin"]


def test_pruning_drops_what_the_ledger_forgot_and_keeps_what_it_knows(tmp_path: Path) -> None:
    home = tmp_path / "home"
    kept_blob = put_blob(home, b"before of a task the ledger keeps")
    old_blob = put_blob(home, b"before of a pruned task")
    young_blob = put_blob(home, b"kept a moment ago by a task still ending")
    end_blob = put_blob(home, b"a notebook as the task the ledger keeps left it")
    save_states(home, "alive", TaskStates("/ws", {"a.txt": KeptFile(kept_blob, "e1"),
                                                  "n.ipynb": KeptFile(None, end_blob)}))
    save_states(home, "pruned", TaskStates("/ws", {"b.txt": KeptFile(old_blob, "e2")}))
    blobs = home / ".mercury-undo" / "blobs"
    hour_ago = blobs.joinpath(old_blob).stat().st_mtime - 7200
    for sha in (kept_blob, old_blob, end_blob):
        os.utime(blobs / sha, (hour_ago, hour_ago))
    now = blobs.joinpath(young_blob).stat().st_mtime + 1

    gone = prune_store(home, lambda ids: {i for i in ids if i == "alive"}, now)

    assert gone == 2  # the pruned task's index and its blob
    assert load_states(home, "pruned") is None and load_states(home, "alive") is not None
    assert get_blob(home, old_blob) is None
    assert get_blob(home, kept_blob) is not None and get_blob(home, young_blob) is not None
    assert get_blob(home, end_blob) is not None  # a notebook's end: its live undo needs it


def test_a_notebooks_end_is_kept_within_the_budget(tmp_path: Path) -> None:
    root, home = tmp_path / "ws", tmp_path / "home"
    root.mkdir()
    (root / "small.ipynb").write_text('{"cells": []}')
    (root / "large.ipynb").write_text('{"cells": [], "x": "' + "x" * 600 + '"}')

    def change(folder: Path) -> None:
        (folder / "small.ipynb").write_text('{"cells": [], "n": 1}')
        (folder / "large.ipynb").write_text('{"cells": [], "y": "' + "y" * 600 + '"}')
        (folder / "a.txt").write_text("text\n")

    files = _kept(root, home, change, max_bytes=700).files
    assert get_blob(home, str(files["small.ipynb"].end)) == b'{"cells": [], "n": 1}'
    assert files["large.ipynb"].end == current_hash(root, "large.ipynb")  # over the budget:
    assert get_blob(home, str(files["large.ipynb"].end)) is None  # its hash only
    assert get_blob(home, str(files["a.txt"].end)) is None  # a text file's end: hash only
