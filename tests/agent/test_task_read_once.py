"""A task's words are read (``read_task``) once per task, not again at each prose stop."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import AgentEvent, Notice
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.banners import TASK_COMPLETE
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.gate import task_reading
from mercury_nb.testing import Turn, call


async def test_two_prose_stops_read_the_task_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted_model,
) -> None:
    calls: list[str] = []
    real = task_reading.read_task

    def counted(task: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(task)
        return real(task, *args, **kwargs)

    for name, module in list(sys.modules.items()):  # every module that holds it
        if name.startswith("mercury_nb.") and getattr(module, "read_task", None) is real:
            monkeypatch.setattr(module, "read_task", counted)
    model = scripted_model([
        Turn(tool_calls=(call("create_file", path="hello.py", content="print('hi')\n"),)),
        Turn(text="Wrote hello.py."),  # prose stop 1: nothing ran it, the gate asks for a run
        Turn(tool_calls=(call("run_command", command="python hello.py"),)),
        Turn(text="Ran it: it prints hi."),  # prose stop 2: verified
    ])
    events: list[AgentEvent] = []
    config = MercuryConfig(workdir=tmp_path, model=model.name, permissions="auto")
    outcome = await run_new_session("Write hello.py that prints hi, then run it.", config,
                                    model=model, on_event=events.append)
    assert outcome.banner.startswith(TASK_COMPLETE), outcome.banner
    assert any(isinstance(e, Notice) for e in events)  # the gate's push after stop 1
    assert calls == ["Write hello.py that prints hi, then run it."]
