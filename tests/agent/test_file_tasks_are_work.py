"""A task that asks for a file, or says what to do in a later clause, is work through the
whole loop: a prose reply never ends it "Response delivered · no file changes". Questions
that name files stay questions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import ScriptedModel, Turn, call


async def _run(tmp_path: Path, task: str, turns: list[Any]) -> Any:
    model = ScriptedModel(turns, on_exhausted="repeat_last")  # guard rounds vary
    config = MercuryConfig(workdir=tmp_path, retry_base_s=0.0)
    return await run_new_session(task, config, model=model), model


@pytest.mark.parametrize("task", [
    "Write notes.rst with three ideas",
    "Create main.zig that prints hi",
    "Save the table as results.xlsx",
    "Summarize README.md into SUMMARY.md",
    "Explain the bug in parse.py and fix it",
    "Tell me what is wrong with utils.py and fix it",
    "Is port 8000 free? If not, kill whatever holds it.",
])
async def test_a_prose_reply_to_work_is_never_delivered_as_an_answer(
    tmp_path: Path, task: str
) -> None:
    for name in ("README.md", "parse.py", "utils.py"):
        (tmp_path / name).write_text("x = 1\n")
    outcome, model = await _run(tmp_path, task,
                                [Turn(text="Here you go:\n1. a\n2. b\n3. c")])
    assert outcome.status != "completed", outcome.banner
    assert "Response delivered" not in outcome.banner
    assert "required" in [r.tool_choice for r in model.requests]  # the guard forced a step


async def test_an_rst_file_the_model_writes_completes_with_its_read_back(
    tmp_path: Path
) -> None:
    outcome, _ = await _run(tmp_path, "Write notes.rst with three ideas", [
        Turn(tool_calls=(call("create_file", path="notes.rst", content="* a\n* b\n* c\n"),)),
        Turn(text="Wrote three ideas."),
    ])
    assert outcome.status == "completed", outcome.banner
    assert "✓ Verified: change summary and read-back of notes.rst ✓" in outcome.banner


@pytest.mark.parametrize("task", ["What does parse.py do?", "Can you explain utils.py?"])
async def test_questions_naming_files_stay_questions(
    tmp_path: Path, task: str
) -> None:
    for name in ("parse.py", "utils.py"):
        (tmp_path / name).write_text("def f():\n    return 1\n")
    outcome, model = await _run(tmp_path, task,
                                [Turn(text="It defines f, which returns 1.")])
    assert outcome.status == "completed", outcome.banner
    assert "Response delivered" in outcome.banner
    assert [r.tool_choice for r in model.requests] == ["auto"]
