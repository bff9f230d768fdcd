"""Undo of files the start snapshot could not keep (outside git: larger than
``snapshot_max_file_bytes``, or binary): a tool's first write copies their bytes first, so
undo restores them; a file a command changed stays named as too large to keep."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mercury_nb import runs
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import close_all
from mercury_nb.testing import Turn, call

BIG = "".join(f"{n},{n * 7 % 1000},north\n" for n in range(200_000)).encode()  # ~3 MiB
PIC = bytes(range(256)) * 40  # binary


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "sales.csv").write_bytes(BIG)
    (folder / "logo.bin").write_bytes(PIC)
    (folder / "log.csv").write_bytes(BIG)
    yield folder
    close_all()


async def test_a_large_file_and_a_binary_a_tool_changed_are_undone(
        workspace: Path, home: Path, scripted_model: Any) -> None:
    config = MercuryConfig(workdir=workspace, home=home, mode="chat", permissions="auto")
    assert len(BIG) > config.snapshot_max_file_bytes
    append = "python -c \"open('log.csv', 'a').write('1,2,south\\n')\""
    turns = [Turn(tool_calls=(call("write_file", path="sales.csv", content="month,amount\n"),
                              call("delete_file", path="logo.bin"),
                              call("run_command", command=append))),
             Turn(text="Replaced sales.csv, removed logo.bin, appended to log.csv.")]
    run = runs.submit(runs.RunRequest(task="Tidy the data files.", config=config,
                                      model=scripted_model(turns)))
    assert not isinstance(run, runs.Refusal), run
    outcome = await run.outcome()
    assert {c.path for c in outcome.changes} == {"sales.csv", "logo.bin", "log.csv"}

    report = runs.undo(outcome.task_id, config)
    assert isinstance(report, runs.UndoReport)
    assert sorted(report.restored) == ["logo.bin", "sales.csv"]
    assert (workspace / "sales.csv").read_bytes() == BIG
    assert (workspace / "logo.bin").read_bytes() == PIC
    [(path, why)] = report.left  # a command's change is not seen ahead of it
    assert path == "log.csv" and "too large to keep" in why
    assert (workspace / "log.csv").read_bytes() == BIG + b"1,2,south\n"


async def test_a_file_git_ignores_is_a_change_and_is_undone(
        tmp_path: Path, home: Path, scripted_model: Any) -> None:
    """git never lists an ignored file (``.env``), changed or not: without its state taken at
    the tool's first change, the task said "no file changes (git-verified)" and undo left
    it as the agent wrote it."""
    from tests.workspace.git_repo import committed_repo

    root = committed_repo(tmp_path / "repo", {".gitignore": ".env\nbuild/\n", "a.txt": "a\n"})
    (root / ".env").write_text("MODE=dev\n")
    config = MercuryConfig(workdir=root, home=home, mode="chat", permissions="auto")
    turns = [Turn(tool_calls=(call("write_file", path=".env", content="MODE=prod\n"),
                              call("write_file", path="build/out.txt", content="o\n"))),
             Turn(text="Set MODE=prod and wrote build/out.txt.")]
    run = runs.submit(runs.RunRequest(task="Set MODE=prod in .env.", config=config,
                                      model=scripted_model(turns)))
    assert not isinstance(run, runs.Refusal), run
    outcome = await run.outcome()
    assert {(c.path, c.kind) for c in outcome.changes} == {(".env", "modified"),
                                                         ("build/out.txt", "created")}
    assert "no file changes" not in outcome.banner
    report = runs.undo(outcome.task_id, config)
    assert isinstance(report, runs.UndoReport)
    assert sorted(report.restored) == [".env", "build/out.txt"]
    assert (root / ".env").read_text() == "MODE=dev\n"
    assert not (root / "build" / "out.txt").exists()
    close_all()
