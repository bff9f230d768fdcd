"""The agent loop against the scripted model: real tools, real files, pure core decisions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import AgentEvent, Notice, TaskFinished, ToolStarted
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.banners import STEP_BUDGET_PAUSE, TASK_COMPLETE
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import Turn, call

TEST_PY = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def cfg(tmp_path: Path, **kw: Any) -> MercuryConfig:
    return MercuryConfig(permissions="auto", workdir=tmp_path, retry_base_s=0.0, **kw)


async def test_create_file_run_its_test_and_stop(tmp_path: Path, backend) -> None:
    fake = backend(
        [
            Turn(
                tool_calls=(
                    call(
                        "create_file", path="calc.py", content="def add(a, b):\n    return a + b\n"
                    ),
                    call("create_file", path="test_calc.py", content=TEST_PY),
                )
            ),
            Turn(tool_calls=(call("run_command", command="python -m pytest -q test_calc.py"),)),
            Turn(text="Added add() with a passing test."),
        ]
    )
    events: list[AgentEvent] = []
    outcome = await run_new_session(
        "Write calc.add with a test", cfg(tmp_path), model=fake.model, on_event=events.append
    )
    assert outcome.status == "completed", outcome.banner
    assert outcome.verdict == "text-stop"
    assert outcome.answer == "Added add() with a passing test."
    assert outcome.banner.startswith(TASK_COMPLETE)
    assert "✓ Verified: python -m pytest -q test_calc.py ✓" in outcome.banner
    assert {c.path for c in outcome.changes} == {"calc.py", "test_calc.py"}
    assert [e.exit_code for e in outcome.evidence] == [0]
    assert outcome.steps == 3
    assert (tmp_path / "calc.py").exists()
    assert isinstance(events[-1], TaskFinished) and events[-1].outcome == outcome
    assert [e.name for e in events if isinstance(e, ToolStarted)] == [
        "create_file",
        "create_file",
        "run_command",
    ]


async def test_unverified_change_gets_one_forced_round(tmp_path: Path, backend) -> None:
    fake = backend(
        [
            Turn(
                tool_calls=(
                    call(
                        "create_file", path="calc.py", content="def add(a, b):\n    return a + b\n"
                    ),
                    call("create_file", path="test_calc.py", content=TEST_PY),
                )
            ),
            Turn(text="Done!"),
            Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
            Turn(text="Verified."),
        ]
    )
    events: list[AgentEvent] = []
    outcome = await run_new_session(
        "Write calc.add with a test", cfg(tmp_path), model=fake.model, on_event=events.append
    )
    assert outcome.status == "completed", outcome.banner
    assert fake.requests[2]["tool_choice"] == "required"
    assert any(isinstance(e, Notice) and e.text.startswith("Checking my work") for e in events)


async def test_failing_check_pauses_with_verification_failed(tmp_path: Path, backend) -> None:
    fake = backend(
        [
            Turn(
                tool_calls=(
                    call(
                        "create_file", path="test_x.py", content="def test_x():\n    assert False\n"
                    ),
                )
            ),
            Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
            Turn(text="All good."),
            Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
            Turn(text="Still all good."),
        ]
    )
    outcome = await run_new_session("add a test", cfg(tmp_path), model=fake.model)
    assert outcome.status == "paused"
    assert "Task complete" not in outcome.banner
    assert "Last check: python -m pytest -q ✗ (exit 1)" in outcome.banner


async def test_question_gets_no_changes_banner(tmp_path: Path, backend) -> None:
    fake = backend([Turn(text="A list is mutable; a tuple is not.")])
    outcome = await run_new_session(
        "What is the difference between a list and a tuple?", cfg(tmp_path), model=fake.model
    )
    assert outcome.status == "completed"
    assert outcome.banner == "Response delivered · no file changes (snapshot-verified)"
    assert len(fake.requests) == 1


async def test_steps_exhausted_continues_then_pauses(tmp_path: Path, backend) -> None:
    # distinct calls, so the doom-loop detector has nothing to say
    turns = [Turn(tool_calls=(call("run_command", command=f"echo part {i}"),)) for i in range(14)]
    fake = backend(turns)
    events: list[AgentEvent] = []
    outcome = await run_new_session(
        "build the thing", cfg(tmp_path, max_steps=2), model=fake.model, on_event=events.append
    )
    assert outcome.status == "paused"
    assert outcome.verdict == "steps-exhausted"
    assert outcome.banner.startswith(STEP_BUDGET_PAUSE)
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert len(notices) == 6
    nudges = [
        m
        for m in fake.requests[-1]["messages"]
        if m["role"] == "user" and str(m["content"]).startswith("[SYSTEM: STEP BUDGET]")
    ]
    assert len(nudges) == 6


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(call("no_such_tool"), id="unknown-tool"),
        pytest.param(call("read_file", path="../outside.txt"), id="escape"),
    ],
)
async def test_tool_errors_go_back_to_the_model(tmp_path: Path, backend, bad) -> None:
    fake = backend([Turn(tool_calls=(bad,)), Turn(text="Sorry, I could not.")])
    outcome = await run_new_session("What is in outside.txt?", cfg(tmp_path), model=fake.model)
    tool_msgs = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert tool_msgs and tool_msgs[0]["content"].lower().startswith("error")
    assert outcome.status == "completed"
