"""A read-back verifies content written where the task said, through the whole loop: a junk
file for "Write a README" or a deletion for "Update the docs" never completes; the README
the task asked for, or the file it asked to remove, still does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import ScriptedModel, Turn, call

JUNK = call("create_file", path="file.txt", content="A sample file")


async def _run(tmp_path: Path, task: str, turns: list[Any]) -> Any:
    model = ScriptedModel(turns, on_exhausted="repeat_last")  # guard rounds vary
    return await run_new_session(task, MercuryConfig(workdir=tmp_path, retry_base_s=0.0),
                                 model=model)


@pytest.mark.parametrize("task", ["Write a README for this project",
                                  "Add a changelog entry for 1.2",
                                  "Write a poem about autumn"])
async def test_a_junk_file_for_a_content_task_never_completes(
    tmp_path: Path, task: str
) -> None:
    outcome = await _run(tmp_path, task,
                         [Turn(tool_calls=(JUNK,)), Turn(text="I'm done.")])
    assert outcome.status != "completed", outcome.banner
    assert "Task complete" not in outcome.banner
    assert "✓ Verified" not in outcome.banner
    assert not [e for e in outcome.evidence if e.kind == "read-back"]


async def test_a_deleted_doc_is_no_read_back_for_updating_the_docs(
    tmp_path: Path
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Docs\n")
    outcome = await _run(tmp_path, "Update the docs with install steps", [
        Turn(tool_calls=(call("delete_file", path="docs/index.md"),)), Turn(text="Done."),
    ])
    assert outcome.status != "completed", outcome.banner
    assert "read-back of docs/index.md" not in outcome.banner
    assert not [e for e in outcome.evidence if e.kind == "read-back"]


@pytest.mark.parametrize(("task", "path"), [
    ("Write a README for this project", "README.md"),
    ("Add a changelog entry for 1.2", "CHANGELOG.md"),
    ("Update the docs with install steps", "docs/install.md"),
])
async def test_the_asked_for_artifact_completes_with_its_read_back(
    tmp_path: Path, task: str, path: str
) -> None:
    outcome = await _run(tmp_path, task, [
        Turn(tool_calls=(call("create_file", path=path, content="# Title\nSome text.\n"),)),
        Turn(text="Wrote it."),
    ])
    assert outcome.status == "completed", outcome.banner
    assert f"✓ Verified: change summary and read-back of {path} ✓" in outcome.banner
    [entry] = outcome.evidence
    assert (entry.kind, entry.path, entry.exit_code) == ("read-back", path, 0)


async def test_a_removal_the_task_asks_for_reads_back_as_gone(
    tmp_path: Path
) -> None:
    (tmp_path / "old.txt").write_text("old\n")
    outcome = await _run(tmp_path, "Remove old.txt", [
        Turn(tool_calls=(call("delete_file", path="old.txt"),)), Turn(text="Removed it."),
    ])
    assert outcome.status == "completed", outcome.banner
    assert "read-back of old.txt" in outcome.banner
    assert [(e.kind, e.path) for e in outcome.evidence] == [("read-back", "old.txt")]
