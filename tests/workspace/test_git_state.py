"""git_state.read_blobs reads no blob over its bound (issue 18, item 1): a huge committed file
is known by size and id, and the change summary still names it, unmeasured."""

from __future__ import annotations

from pathlib import Path

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.workspace import git_state
from mercury_nb.workspace.changes import measure_changes
from mercury_nb.workspace.snapshot import take_snapshot
from tests.workspace.git_repo import committed_repo, git

HUGE = 3_000_000
BOUND = 4096


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repo with a small and a huge committed file (the huge one sparse-free, real bytes)."""
    return committed_repo(tmp_path / "repo",
                          {"small.txt": "one\ntwo\n", "huge.txt": "z\n" * (HUGE // 2)})


def test_a_blob_over_the_bound_is_not_read(repo: Path) -> None:
    found_repo = git_state.find_repo(repo)
    assert found_repo is not None
    blobs = git_state.read_blobs(found_repo, "HEAD", ["small.txt", "huge.txt", "absent.txt"],
                                 BOUND)
    assert blobs["small.txt"] == b"one\ntwo\n"
    huge = blobs["huge.txt"]
    assert isinstance(huge, git_state.UnreadBlob)
    assert huge.size == HUGE
    assert huge.oid == git(repo, "rev-parse", "HEAD:huge.txt").strip()
    assert blobs["absent.txt"] is None


def test_a_changed_huge_committed_file_is_named_unmeasured(repo: Path) -> None:
    config = MercuryConfig(workdir=repo, snapshot_max_file_bytes=BOUND)
    snapshot = take_snapshot(repo, config)
    (repo / "huge.txt").write_text("y\n" * (HUGE // 2 + 1))
    (repo / "small.txt").write_text("one\ntwo\nthree\n")
    changes = {c.path: c for c in measure_changes(snapshot, repo).changes}
    assert changes["small.txt"].added == 1
    huge = changes["huge.txt"]
    assert huge.kind == "modified"
    assert not huge.measured
    assert huge.size == HUGE + 2
    assert f"was {HUGE:,}" in huge.preview or f"was {HUGE}" in huge.preview, huge.preview


def test_a_planted_fsmonitor_never_runs_and_git_gets_no_secrets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repository's config can name a program ``git status`` starts (core.fsmonitor); a
    task's command could plant one. mercury's own git reads start none, and get no keys."""
    root = committed_repo(tmp_path / "repo", {"a.txt": "a\n"})
    ran = tmp_path / "ran.txt"
    hook = root / "monitor.sh"
    hook.write_text(f"#!/bin/sh\nenv > {ran}\n")
    hook.chmod(0o755)
    git(root, "config", "core.fsmonitor", str(hook))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-0123456789abcdef")
    repo = git_state.find_repo(root)
    assert repo is not None
    assert "monitor.sh" in " ".join(git_state.dirty_paths(repo))
    assert not ran.exists()
    env = git_state.run_git(["-c", "alias.e=!env", "e"], root).decode()
    assert "sk-planted" not in env and "OPENAI_API_KEY" not in env
