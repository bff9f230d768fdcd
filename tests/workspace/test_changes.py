"""The change summary is measured on disk: content snapshots outside git, git inside a repo."""

from __future__ import annotations

from pathlib import Path

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import FileChange
from mercury_nb.workspace.changes import ChangeReport, diff_lines, measure_changes
from mercury_nb.workspace.snapshot import Snapshot, take_snapshot
from tests.workspace.git_repo import committed_repo, git


def _summary(report: ChangeReport) -> dict[str, tuple[str, int, int]]:
    return {c.path: (c.kind, c.added, c.removed) for c in report.changes}


def _config(root: Path, **changes: object) -> MercuryConfig:
    return MercuryConfig(workdir=root, **changes)  # type: ignore[arg-type]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repo with three committed files and a local identity."""
    return committed_repo(tmp_path / "repo", {"a.txt": "one\ntwo\nthree\n",
                                              "b.txt": "alpha\nbeta\n", "c.txt": "gone soon\n"})


# --- outside git: content snapshot ------------------------------------------------------


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "keep.txt").write_text("same\n")
    (root / "edit.txt").write_text("l1\nl2\nl3\n")
    (root / "drop.txt").write_text("x\ny\n")
    return root


def test_snapshot_summary_counts_created_modified_deleted(plain: Path) -> None:
    snapshot = take_snapshot(plain, _config(plain))
    assert snapshot.kind == "snapshot"
    (plain / "edit.txt").write_text("l1\nL2\nl3\nl4\n")
    (plain / "drop.txt").unlink()
    (plain / "sub").mkdir()
    (plain / "sub" / "new.py").write_text("print('hi')\n" * 3)
    report = measure_changes(snapshot, plain)
    assert report.verified_by == "snapshot"
    assert _summary(report) == {
        "drop.txt": ("deleted", 0, 2),
        "edit.txt": ("modified", 2, 1),
        "sub/new.py": ("created", 3, 0),
    }
    assert not report.unchanged


def test_preview_shows_added_then_removed_lines(plain: Path) -> None:
    snapshot = take_snapshot(plain, _config(plain))
    (plain / "edit.txt").write_text("l1\nL2\nl3\n")
    [change] = measure_changes(snapshot, plain).changes
    assert change.preview == "+L2\n-l2"


def test_preview_is_short(plain: Path) -> None:
    snapshot = take_snapshot(plain, _config(plain))
    (plain / "big.txt").write_text("".join(f"line {i} " + "x" * 300 + "\n" for i in range(50)))
    [change] = measure_changes(snapshot, plain).changes
    assert change.added == 50
    assert len(change.preview) <= 400
    assert change.preview.startswith("+line 0 ")


def test_untouched_workspace_is_unchanged(plain: Path) -> None:
    snapshot = take_snapshot(plain, _config(plain))
    (plain / "tmp.txt").write_text("scratch\n")
    (plain / "tmp.txt").unlink()
    (plain / "keep.txt").write_text("same\n")  # rewritten with identical content
    report = measure_changes(snapshot, plain)
    assert report.changes == []
    assert report.unchanged


def test_caches_and_virtualenvs_are_ignored(plain: Path) -> None:
    snapshot = take_snapshot(plain, _config(plain))
    for noise in ("__pycache__/m.cpython-311.pyc", "node_modules/x/index.js", ".venv/bin/python"):
        (plain / noise).parent.mkdir(parents=True, exist_ok=True)
        (plain / noise).write_text("noise\n")
    (plain / "stray.pyc").write_bytes(b"\x00\x01")
    assert measure_changes(snapshot, plain).unchanged


def test_binary_and_large_files_are_compared_by_hash(plain: Path) -> None:
    (plain / "blob.bin").write_bytes(b"\x00\x01\x02")
    (plain / "large.txt").write_text("y\n" * 1000)
    config = _config(plain, snapshot_max_file_bytes=1024)
    snapshot = take_snapshot(plain, config)
    (plain / "blob.bin").write_bytes(b"\x00\x01\x03")
    (plain / "large.txt").write_text("y\n" * 1001)
    changes = {c.path: c for c in measure_changes(snapshot, plain).changes}
    assert changes["blob.bin"] == FileChange(
        path="blob.bin",
        added=0,
        removed=0,
        kind="modified",
        preview="(binary file, 3 bytes) (was 3 bytes)",
        measured=False,
        size=3,
        binary=True,
    )
    assert changes["large.txt"].kind == "modified"
    assert not changes["large.txt"].measured
    assert "lines not counted" in changes["large.txt"].preview


def test_file_cap_makes_the_summary_incomplete(plain: Path) -> None:
    for i in range(12):
        (plain / f"f{i:02}.txt").write_text(f"{i}\n")
    snapshot = take_snapshot(plain, _config(plain, snapshot_max_files=10))
    assert snapshot.truncated
    report = measure_changes(snapshot, plain)
    assert report.changes == []
    assert not report.complete
    assert not report.unchanged  # "no changes" cannot be claimed from a partial view


def test_snapshot_survives_json_round_trip(plain: Path) -> None:
    (plain / "blob.bin").write_bytes(b"\x00\xff")
    snapshot = take_snapshot(plain, _config(plain))
    restored = Snapshot.from_json(snapshot.to_json())
    assert restored == snapshot
    (plain / "edit.txt").write_text("changed\n")
    assert measure_changes(restored, plain) == measure_changes(snapshot, plain)


def test_a_stored_snapshot_gets_back_the_texts_of_files_still_as_they_were(plain: Path) -> None:
    (plain / "blob.bin").write_bytes(b"\x00\xff")
    (plain / "touched.txt").write_text("before\n")
    snapshot = take_snapshot(plain, _config(plain))
    stored = Snapshot.from_json(snapshot.stored().to_json())
    assert stored.files["edit.txt"].text is None  # unchanged files keep no text when stored
    (plain / "touched.txt").write_text("edited while paused\n")
    back = stored.rehydrated()
    assert back.files["edit.txt"] == snapshot.files["edit.txt"]  # the start text, read again
    assert back.files["touched.txt"].text is None  # changed meanwhile: never today's text
    assert back.files["blob.bin"] == stored.files["blob.bin"]
    assert stored.rehydrated(max_text_bytes=0).files["edit.txt"].text is None  # the budget


def test_git_dirty_files_get_their_texts_back_too(repo: Path) -> None:
    (repo / "a.txt").write_text("one\ntwo\nthree\nfour\n")  # dirty at start
    snapshot = take_snapshot(repo, _config(repo))
    stored = Snapshot.from_json(snapshot.stored().to_json())
    assert stored.git is not None and stored.git.dirty["a.txt"] is not None
    assert stored.git.dirty["a.txt"].text is None
    back = stored.rehydrated()
    assert back.git is not None and back.git.dirty["a.txt"] == snapshot.git.dirty["a.txt"]


@pytest.mark.parametrize(
    ("old", "new", "added", "removed"),
    [
        pytest.param("a b c", "a b c", [], [], id="same"),
        pytest.param("a b c", "a x c", ["x"], ["b"], id="replace-middle"),
        pytest.param("a b", "a b c d", ["c", "d"], [], id="append"),
        pytest.param("a b c", "c", [], ["a", "b"], id="delete-head"),
        pytest.param("", "a", ["a"], [], id="from-empty"),
    ],
)
def test_diff_lines(old: str, new: str, added: list[str], removed: list[str]) -> None:
    assert diff_lines(old.split(), new.split()) == (added, removed)


# --- inside git -------------------------------------------------------------------------


def test_git_summary_counts_only_changes_made_during_the_task(repo: Path) -> None:
    # Uncommitted work from before the task: an edit, a staged file and an untracked file.
    (repo / "a.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    (repo / "untracked.txt").write_text("u1\n")
    snapshot = take_snapshot(repo, _config(repo))
    assert snapshot.kind == "git"

    (repo / "a.txt").write_text("one\ntwo\nthree\nfour\nfive\nsix\n")  # +1 on top of +2
    (repo / "b.txt").write_text("alpha\nBETA\n")  # clean at start
    (repo / "c.txt").unlink()  # tracked, deleted during the task
    (repo / "new.txt").write_text("n1\nn2\n")  # created
    (repo / "flash.txt").write_text("here and gone\n")
    (repo / "flash.txt").unlink()  # created then deleted: no change
    report = measure_changes(snapshot, repo)

    assert report.verified_by == "git"
    assert report.complete
    assert _summary(report) == {
        "a.txt": ("modified", 1, 0),
        "b.txt": ("modified", 1, 1),
        "c.txt": ("deleted", 0, 1),
        "new.txt": ("created", 2, 0),
    }


def test_git_pre_existing_edit_reverted_during_task_is_a_change(repo: Path) -> None:
    (repo / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    snapshot = take_snapshot(repo, _config(repo))
    git(repo, "checkout", "--", "a.txt")
    assert _summary(measure_changes(snapshot, repo)) == {"a.txt": ("modified", 0, 1)}


def test_git_untouched_dirty_repo_is_unchanged(repo: Path) -> None:
    (repo / "a.txt").write_text("dirty before the task\n")
    (repo / "untracked.txt").write_text("u\n")
    snapshot = take_snapshot(repo, _config(repo))
    report = measure_changes(snapshot, repo)
    assert report.changes == []
    assert report.unchanged
    assert report.verified_by == "git"


def test_git_changes_committed_during_the_task_still_count(repo: Path) -> None:
    snapshot = take_snapshot(repo, _config(repo))
    (repo / "b.txt").write_text("alpha\nbeta\ngamma\n")
    git(repo, "commit", "-q", "-am", "agent commit")
    assert _summary(measure_changes(snapshot, repo)) == {"b.txt": ("modified", 1, 0)}


def test_git_repo_without_commits(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    (root / "pre.txt").write_text("before\n")
    snapshot = take_snapshot(root, _config(root))
    assert snapshot.kind == "git"
    (root / "made.txt").write_text("x\n")
    assert _summary(measure_changes(snapshot, root)) == {"made.txt": ("created", 1, 0)}


def test_git_workspace_in_a_subfolder_sees_only_its_files(repo: Path) -> None:
    sub = repo / "project"
    sub.mkdir()
    (sub / "main.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "sub")
    snapshot = take_snapshot(sub, _config(sub))
    (repo / "b.txt").write_text("outside the workspace\n")
    (sub / "main.py").write_text("x = 2\n")
    (sub / "pkg").mkdir()
    (sub / "pkg" / "mod.py").write_text("y = 1\n")
    assert _summary(measure_changes(snapshot, sub)) == {
        "main.py": ("modified", 1, 1),
        "pkg/mod.py": ("created", 1, 0),
    }


def test_workspace_inside_an_ignored_folder_uses_a_content_snapshot(repo: Path) -> None:
    (repo / ".gitignore").write_text("scratch/\n")
    scratch = repo / "scratch"
    scratch.mkdir()
    snapshot = take_snapshot(scratch, _config(scratch))
    assert snapshot.kind == "snapshot"
    (scratch / "out.csv").write_text("a,b\n")
    assert _summary(measure_changes(snapshot, scratch)) == {"out.csv": ("created", 1, 0)}


def test_git_ignores_noise_folders(repo: Path) -> None:
    snapshot = take_snapshot(repo, _config(repo))
    (repo / "__pycache__").mkdir()
    (repo / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\x00")
    assert measure_changes(snapshot, repo).unchanged


def test_git_snapshot_survives_json_round_trip(repo: Path) -> None:
    (repo / "a.txt").write_text("dirty\n")
    snapshot = take_snapshot(repo, _config(repo))
    restored = Snapshot.from_json(snapshot.to_json())
    assert restored == snapshot
    (repo / "a.txt").write_text("dirty\nmore\n")
    assert _summary(measure_changes(restored, repo)) == {"a.txt": ("modified", 1, 0)}


# --- per-file unified diffs, and files that are not diffed ------------------------------


def test_modified_file_carries_a_unified_diff(plain: Path) -> None:
    snapshot = take_snapshot(plain, _config(plain))
    (plain / "edit.txt").write_text("l1\nL2\nl3\n")
    [change] = measure_changes(snapshot, plain).changes
    assert change.measured
    assert change.diff.splitlines() == [
        "--- a/edit.txt", "+++ b/edit.txt", "@@ -1,3 +1,3 @@", " l1", "-l2", "+L2", " l3",
    ]


def test_created_and_deleted_files_diff_against_nothing(plain: Path) -> None:
    snapshot = take_snapshot(plain, _config(plain))
    (plain / "new.py").write_text("x = 1\n")
    (plain / "drop.txt").unlink()
    changes = {c.path: c for c in measure_changes(snapshot, plain).changes}
    assert changes["new.py"].diff.splitlines()[-1] == "+x = 1"
    assert changes["new.py"].diff.startswith("--- /dev/null\n+++ b/new.py\n")
    assert changes["drop.txt"].diff.splitlines()[-2:] == ["-x", "-y"]


def test_a_long_diff_is_capped_with_a_marker(plain: Path) -> None:
    from mercury_nb.workspace.changes import DIFF_MAX_CHARS

    snapshot = take_snapshot(plain, _config(plain))
    (plain / "big.txt").write_text("".join(f"line {n}\n" for n in range(20_000)))
    [change] = measure_changes(snapshot, plain).changes
    assert len(change.diff) <= DIFF_MAX_CHARS + 100
    assert change.diff.endswith("more characters of diff not shown)")
    assert change.added == 20_000


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(b"\x00\x01binary" * 10, "created, 80 bytes, binary, not diffed", id="binary"),
        pytest.param(b"a\n" * 1_100_000, "created, 2.1 MB, not diffed", id="too-large"),
    ],
)
def test_unmeasured_file_is_summarised_not_counted(
    plain: Path, content: bytes, expected: str
) -> None:
    from mercury_nb.ui.banners import change_line

    snapshot = take_snapshot(plain, _config(plain))
    (plain / "blob.bin").write_bytes(content)
    [change] = measure_changes(snapshot, plain).changes
    assert not change.measured
    assert change.diff == ""
    assert change_line(change) == f"blob.bin ({expected})"


@pytest.mark.parametrize("in_git", [True, False])
def test_jupyter_collaborations_store_is_never_a_change(tmp_path: Path, in_git: bool) -> None:
    """jupyter-collaboration keeps its shared documents in ``.jupyter_ystore.db`` in the
    server root, written while a notebook is open: not the task's change, never undone."""
    if in_git:
        root = committed_repo(tmp_path / "ws", {"a.txt": "one\n"})
    else:
        root = tmp_path / "ws"
        root.mkdir()
        (root / "a.txt").write_text("one\n")
    (root / ".jupyter_ystore.db").write_bytes(b"SQLite format 3\x00 before")
    snapshot = take_snapshot(root, _config(root))
    for name in (".jupyter_ystore.db", ".jupyter_ystore.db-wal", ".jupyter_ystore.db-shm"):
        (root / name).write_bytes(b"SQLite format 3\x00 after")
    (root / "a.txt").write_text("two\n")
    assert _summary(measure_changes(snapshot, root)) == {"a.txt": ("modified", 1, 1)}
