"""A task's text is masked once through the door: the paused-duplicate lookup, the ledger's
row and the outcome shown to the user take the one masked text; a continue takes its row's,
and a sub-agent's outcome its own row's."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.contract import redaction
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import open_ledger
from mercury_nb.runs import Refusal, RunRequest, submit
from mercury_nb.testing import Turn, call

KEY = "sk-masked-once-4f1d9e7c2b"
TASK = f"Write notes.txt (the key {KEY} must not show)."
SUB_TASK = f"Write sub.txt; the key is {KEY}."


def count_masks(monkeypatch: pytest.MonkeyPatch, task: str) -> list[str]:
    """Each call of ``redact`` (in every mercury_nb module holding it, the checkpoint's own
    redaction inside contract.redaction aside) on the text ``task``."""
    calls: list[str] = []
    real = redaction.redact

    def counted(text: str, *args: Any, **kwargs: Any) -> str:
        if text == task:
            calls.append(text)
        return real(text, *args, **kwargs)

    for name, module in list(sys.modules.items()):
        if (name.startswith("mercury_nb.") and name != "mercury_nb.contract.redaction"
                and getattr(module, "redact", None) is real):
            monkeypatch.setattr(module, "redact", counted)
    return calls


async def run(workspace: Path, home: Path, model: Any, task: str = TASK,
              task_id: str | None = None) -> Any:
    config = MercuryConfig(workdir=workspace, home=home, permissions="auto")
    request = RunRequest(task="" if task_id else task, config=config, model=model,
                         resume=task_id is not None, task_id=task_id)
    started = submit(request)
    assert not isinstance(started, Refusal), started
    return await started.outcome()


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MASKED_ONCE_API_KEY", KEY)  # a secret-named variable: masked
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


async def test_a_new_task_and_its_continue(workspace: Path, home: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           scripted_model: Any) -> None:
    masked = count_masks(monkeypatch, TASK)
    first = scripted_model([Turn(tool_calls=(call("finish", status="blocked",
                                                  blocker="notes.txt needs a word from you."),))])
    paused = await run(workspace, home, first)
    assert paused.status == "paused", paused.banner
    assert len(masked) == 1  # before: the lookup, the row and the outcome, each again
    row = open_ledger(home).ledger.get(paused.task_id)
    assert row is not None and KEY not in row.task and row.task == paused.task
    assert KEY not in paused.task and "***" in paused.task

    masked.clear()
    second = scripted_model([
        Turn(tool_calls=(call("create_file", path="notes.txt", content="a\n"),)),
        Turn(tool_calls=(call("run_command", command="cat notes.txt"),)),
        Turn(text="notes.txt holds a.")])
    done = await run(workspace, home, second, task_id=paused.task_id)
    assert done.status == "completed", done.banner
    assert masked == []  # the row's text, masked when the task started
    assert done.task == paused.task


async def test_a_sub_agent_takes_its_rows_text(workspace: Path, home: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               scripted_model: Any) -> None:
    masked = count_masks(monkeypatch, SUB_TASK)
    model = scripted_model([
        Turn(tool_calls=(call("delegate_task", task=SUB_TASK),)),
        Turn(tool_calls=(call("create_file", path="sub.txt", content="s\n"),)),
        Turn(tool_calls=(call("run_command", command="cat sub.txt"),)),
        Turn(text="sub.txt holds s."),
        Turn(tool_calls=(call("run_command", command="cat sub.txt"),)),
        Turn(text="The helper wrote sub.txt; it holds s."),
    ])
    done = await run(workspace, home, model, task="Have a helper write sub.txt.")
    assert done.status == "completed", done.banner
    sub = open_ledger(home).ledger.get(f"{done.task_id}.1")
    assert sub is not None and KEY not in sub.task and "***" in sub.task
    assert len(masked) == 1, masked  # the sub-agent's row; its outcome took that text
