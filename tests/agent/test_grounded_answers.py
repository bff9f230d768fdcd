"""Grounded answers through the loop: named files come read and redacted, unread ones noted."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.escalation.guard_texts import GROUNDING_HEADER
from mercury_nb.testing import ScriptedModel, Turn, call

README = "# calc\nA tiny calculator for the command line.\nDeploy key: sk-test-abcdefghijklmnop\n"
NOTICE = "answered without reading README.md"


def _config(root: Path, mode: str = "chat", **extra: Any) -> MercuryConfig:
    return MercuryConfig(workdir=root, mode=mode, model="scripted/test", **extra)  # type: ignore[arg-type]


def _grounding(model: ScriptedModel, index: int = 0) -> list[str]:
    """The agent-made grounding messages of request ``index``."""
    messages = model.requests[index].messages
    return [m["content"] for m in messages
            if m["role"] == "user" and str(m["content"]).startswith(GROUNDING_HEADER[:30])]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text(README)
    return tmp_path


async def test_a_question_naming_a_file_gets_it_read_first_and_redacted(
    workspace: Path, scripted_model: Any
) -> None:
    model = scripted_model([Turn(text="README.md says: a tiny calculator.")])
    outcome = await run_new_session("Summarise README.md in one sentence.", _config(workspace),
                                    model=model)

    [grounding] = _grounding(model)
    assert "=== file: README.md ===" in grounding
    assert "A tiny calculator for the command line." in grounding
    assert "sk-test-abcdefghijklmnop" not in grounding and "sk-***" in grounding
    first = model.requests[0].messages
    assert first[1] == {"role": "user", "content": "Summarise README.md in one sentence."}
    assert first[2]["content"] == grounding  # after the task, before any reply
    assert outcome.status == "completed" and NOTICE not in outcome.banner
    assert outcome.unread == []


async def test_an_answer_about_a_file_never_read_carries_the_notice(
    workspace: Path, scripted_model: Any
) -> None:
    model = scripted_model([Turn(text="This is the README.md that lets users install it.")])
    outcome = await run_new_session("What is this project about?", _config(workspace), model=model)

    assert _grounding(model) == []  # the question names no file
    assert outcome.status == "completed"
    assert outcome.banner.splitlines()[-1] == NOTICE
    assert outcome.unread == ["README.md"]


async def test_reading_it_with_read_file_removes_the_notice(
    workspace: Path, scripted_model: Any
) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("read_file", path="README.md"),)),
        Turn(text="README.md: a tiny calculator for the command line."),
    ])
    outcome = await run_new_session("What is this project about?", _config(workspace), model=model)

    assert outcome.status == "completed"
    assert NOTICE not in outcome.banner and outcome.unread == []


async def test_a_failed_read_does_not_count_as_reading(
    workspace: Path, scripted_model: Any
) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("read_file", path="README.md", offset=0, limit=-1),)),
        Turn(text="README.md: a calculator."),
    ])
    outcome = await run_new_session("What is this project about?", _config(workspace), model=model)
    failed = [m for m in model.requests[1].messages if m["role"] == "tool"]
    assert failed and "calc" not in failed[0]["content"]  # the call was refused
    assert outcome.unread == ["README.md"]


async def test_turned_off_the_question_is_not_grounded_and_the_answer_is_noted(
    workspace: Path, scripted_model: Any
) -> None:
    model = scripted_model([Turn(text="This is the README.md that lets users install it.")])
    config = _config(workspace, answer_grounding_files=0)
    outcome = await run_new_session("Summarise README.md in one sentence.", config, model=model)
    assert _grounding(model) == []
    assert outcome.unread == ["README.md"] and NOTICE in outcome.banner


async def test_work_is_not_grounded(workspace: Path, scripted_model: Any) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("edit_file", path="README.md", old_text="tiny", new_text="small"),)),
        Turn(text="Done."),
    ])
    await run_new_session("Fix the wording in README.md", _config(workspace, mode="execute",
                                                            max_steps=3), model=model)
    assert _grounding(model) == []


async def test_files_outside_the_workspace_or_not_regular_are_never_read(
    tmp_path: Path, scripted_model: Any
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("TOP SECRET outside the workspace\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "link.md").symlink_to(outside / "secret.md")
    os.mkfifo(root / "pipe.txt")  # opening it to read would block forever
    (root / "notes.md").write_text("the notes\n")
    model = scripted_model([Turn(text="Nothing to say.")])
    await run_new_session("Compare link.md, pipe.txt, ../outside/secret.md and notes.md",
                          _config(root), model=model)

    [grounding] = _grounding(model)
    assert "TOP SECRET" not in grounding
    assert "=== file: notes.md ===" in grounding and "the notes" in grounding
    assert "pipe.txt" not in grounding and "link.md" not in grounding


async def test_a_large_file_comes_cut_to_the_budget(
    tmp_path: Path, scripted_model: Any
) -> None:
    (tmp_path / "log.txt").write_text("".join(f"line {n}\n" for n in range(5000)))  # 49 KB
    (tmp_path / "huge.txt").write_text("x" * 80_001)  # over 4 bytes per allowed character
    model = scripted_model([Turn(text="It logs lines.")])
    config = _config(tmp_path, read_file_max_chars=20_000)
    await run_new_session("What is in log.txt and huge.txt?", config, model=model)

    [grounding] = _grounding(model)
    assert "line 0\n" in grounding and "line 4999" not in grounding
    assert "read_file(path='log.txt', offset=" in grounding  # says how to read on
    assert len(grounding) < 20_000 + 1000
    assert "(not read: huge.txt is 80,001 bytes" in grounding and "xxxx" not in grounding
