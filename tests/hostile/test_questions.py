"""A question phrased as an instruction is not forced to change files.

End to end with a scripted model: a task that only asks (its words name a folder and a
file, so it reads as work) ends as an answer once the model investigated and answered, with
no forced round; where it is unclear, the guard's first round offers the typed "no change
needed" choice (``finish`` with ``no_change``) instead of forcing a mutation. A task that
plainly demands a change is still pushed by the guard, and the typed choice is no way out of
it into a success banner: it pauses, naming that the model declined to change anything."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import Notice
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.banners import DECLINED, NO_BLOCKER
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.escalation.guard_texts import (
    FORCED_ROUND_DIRECTIVE,
    NO_CHANGE_OFFER_DIRECTIVE,
    NO_CHANGE_OFFER_NOTICE,
)
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.testing import ScriptedModel, Turn, call

NOTES_TASK = "Look through the notes folder and tell me which file mentions the budget"
ANSWER = "notes/q3.md mentions the budget: it puts Q3 spending at 4,000 EUR."
GIT_ANSWERED = "Response delivered · no file changes (git-verified)"


def _workspace(root: Path) -> Path:
    (root / "notes").mkdir()
    (root / "notes" / "groceries.md").write_text("eggs, milk\n")
    (root / "notes" / "q3.md").write_text("Q3 budget: 4,000 EUR\n")
    (root / "config.yaml").write_text("timeout: 30\n")
    (root / "test_calc.py").write_text("def test_add():\n    assert 1 + 1 == 3\n")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q",
                  "-m", "start"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


async def _run(root: Path, task: str, turns: list[Any]) -> tuple[TaskOutcome, ScriptedModel,
                                                                  list[Notice]]:
    model = ScriptedModel(turns, on_exhausted="repeat_last")  # a stuck model repeats itself
    notices: list[Notice] = []
    config = MercuryConfig(workdir=_workspace(root), retry_base_s=0.0,
                           permissions="auto")  # its read-only commands run unasked
    outcome = await run_new_session(task, config, model=model,
                                    on_event=lambda e: notices.append(e) if isinstance(e, Notice)
                                    else None)
    return outcome, model, notices


def _forced(model: ScriptedModel) -> list[Any]:
    return [r for r in model.requests if r.tool_choice == "required"]


def _last_user(request: Any) -> str:
    return next(m["content"] for m in reversed(request.messages) if m["role"] == "user")


INVESTIGATIONS = [
    pytest.param(NOTES_TASK, [
        Turn(tool_calls=(call("list_dir", path="notes"),)),
        Turn(tool_calls=(call("read_file", path="notes/groceries.md"),
                         call("read_file", path="notes/q3.md"))),
        Turn(text=ANSWER),
    ], id="the-notes-folder"),
    pytest.param("Check the notes folder for the word budget and tell me where it is", [
        # grep exits 1 on no match in groceries: a read-only command is an investigation
        Turn(tool_calls=(call("run_command", command="grep -l budget notes/groceries.md"),)),
        Turn(tool_calls=(call("run_command", command="grep -il budget notes/q3.md"),)),
        Turn(text="Only notes/q3.md has it."),
    ], id="read-only-commands"),
    pytest.param("Read config.yaml and tell me the default timeout", [
        Turn(tool_calls=(call("read_file", path="config.yaml"),)),
        Turn(tool_calls=(call("finish", status="done", summary="The timeout is 30 seconds."),)),
    ], id="a-typed-done-after-a-read"),
    pytest.param("Look at the failing test and tell me why it fails", [
        Turn(tool_calls=(call("read_file", path="test_calc.py"),)),
        Turn(text="test_add asserts 1 + 1 == 3, which is false: the test itself is wrong."),
    ], id="why-a-test-fails"),
]


@pytest.mark.parametrize(("task", "turns"), INVESTIGATIONS)
async def test_an_answer_after_investigation_ends_as_an_answer_with_no_forcing_round(
    tmp_path: Path, task: str, turns: list[Any]
) -> None:
    outcome, model, notices = await _run(tmp_path, task, turns)
    assert outcome.status == "completed", outcome.banner
    # (a grep shows no file: an answer naming one says "answered without reading" it)
    assert outcome.banner.splitlines()[0] == GIT_ANSWERED
    assert outcome.changes == [] and outcome.answer
    assert _forced(model) == []  # zero forcing rounds
    assert [n for n in notices if n.kind == "guard-round"] == []
    model.assert_complete()


async def test_an_unclear_task_gets_the_offered_round_and_the_typed_no_change_answers(
    tmp_path: Path
) -> None:
    outcome, model, notices = await _run(tmp_path, NOTES_TASK, [
        Turn(text="Let me look through the notes folder for you."),  # narration, no read
        Turn(tool_calls=(call("read_file", path="notes/q3.md"),)),  # the offered round
        Turn(tool_calls=(call("finish", status="no_change", summary=ANSWER),)),
    ])
    assert outcome.status == "completed", outcome.banner
    assert outcome.banner == GIT_ANSWERED
    assert outcome.answer == ANSWER and outcome.changes == []
    [offered] = _forced(model)  # one forced step, offering the choice, and no other
    assert _last_user(offered) == NO_CHANGE_OFFER_DIRECTIVE
    assert [n.text for n in notices if n.kind == "guard-round"] == [NO_CHANGE_OFFER_NOTICE]
    assert "Task complete" not in outcome.banner
    model.assert_complete()


async def test_an_unclear_task_that_takes_the_typed_choice_at_once_answers(
    tmp_path: Path
) -> None:
    outcome, model, _ = await _run(tmp_path, "Go through the notes folder and report the budget", [
        Turn(text="I will search the notes now."),
        Turn(tool_calls=(call("finish", status="no_change", summary=ANSWER),)),
    ])
    assert outcome.status == "completed" and outcome.banner.startswith(GIT_ANSWERED)
    assert len(_forced(model)) == 1


CHANGE_NARRATIONS = [
    pytest.param("Create hello.py that prints hello world", [
        Turn(tool_calls=(call("list_dir", path="."),)),  # it takes tools: the guard runs
        Turn(text="```python\nprint('hello world')\n```\nSave this as hello.py."),
    ], id="code-in-prose"),
    pytest.param("Fix the failing test in test_calc.py", [
        Turn(tool_calls=(call("read_file", path="test_calc.py"),)),
        Turn(text="The test asserts 1 + 1 == 3; I'll change it to 2."),
    ], id="read-then-promise"),
    pytest.param("Look through the notes folder and fix the budget total in the file that "
                 "mentions it", [
        Turn(tool_calls=(call("read_file", path="notes/q3.md"),)),
        Turn(text=ANSWER),  # reads like an answer, but the task demands a change
    ], id="an-answer-to-a-change-task"),
]


@pytest.mark.parametrize(("task", "turns"), CHANGE_NARRATIONS)
async def test_a_change_task_that_narrates_is_still_guarded(
    tmp_path: Path, task: str, turns: list[Any]
) -> None:
    outcome, model, _ = await _run(tmp_path, task, turns)
    assert outcome.status == "paused", outcome.banner
    assert NO_BLOCKER in outcome.banner and "Response delivered" not in outcome.banner
    forced = _forced(model)
    assert len(forced) == MercuryConfig().guard_rounds_total
    assert _last_user(forced[0]) == FORCED_ROUND_DIRECTIVE  # forced: no offer of no change
    assert all(_last_user(r) != NO_CHANGE_OFFER_DIRECTIVE for r in forced)
    # the typed choice exists for the model (finish's statuses), it is just not offered here
    [finish] = [t for t in forced[0].tools if t["function"]["name"] == "finish"]
    assert "no_change" in finish["function"]["parameters"]["properties"]["status"]["enum"]


DECLINES = [
    pytest.param("Create hello.py that prints hello world", [
        Turn(tool_calls=(call("finish", status="no_change",
                              summary="A print needs no file; run print('hello world')."),)),
    ], id="at-once"),
    pytest.param("Fix the failing test in test_calc.py", [
        Turn(tool_calls=(call("read_file", path="test_calc.py"),)),
        Turn(text="I'll fix the assertion."),
        Turn(tool_calls=(call("finish", status="no_change",
                              summary="A print needs no file; run print('hello world')."),)),
    ], id="in-a-guard-round"),
]


@pytest.mark.parametrize(("task", "turns"), DECLINES)
async def test_a_change_task_declined_with_no_change_pauses_honestly(
    tmp_path: Path, task: str, turns: list[Any]
) -> None:
    outcome, model, _ = await _run(tmp_path, task, turns)
    assert outcome.status == "paused" and outcome.resumable, outcome.banner
    assert "Task complete" not in outcome.banner and "✓" not in outcome.banner
    assert "Response delivered" not in outcome.banner
    assert outcome.banner.startswith(DECLINED)
    assert outcome.blocker == ("the model declined to change anything: A print needs no file; "
                               "run print('hello world').")
    assert outcome.evidence == [] or all(e.kind != "read-back" for e in outcome.evidence)
    model.assert_complete()
