"""delegate_task end to end: a parent loop runs a supervised sub-agent on the same model script.

Parent and sub-agent share one scripted model (in-process, or over HTTP through litellm to the
loopback server), so the script interleaves their turns in the order they are asked for.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import (
    AgentEvent,
    Notice,
    StepStarted,
    TaskFinished,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnEnded,
)
from mercury_nb.agent.subagent import subagent_registry, subagent_sink
from mercury_nb.contract.banners import STEP_BUDGET_PAUSE
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.runs import run_task
from mercury_nb.testing import Turn, call
from mercury_nb.tools.registry import ToolRegistry, default_registry
from mercury_nb.transport.protocol import ModelRequest

CALC = "def add(a, b):\n    return a + b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PARTS_TASK = "Write the parts files part0.txt to part3.txt"
SUB_RESUME_NUDGE = "[SYSTEM: RESUMED] This task paused — its step budget ran out —"


def cfg(tmp_path: Path, **kw: Any) -> MercuryConfig:
    return MercuryConfig(permissions="auto", workdir=tmp_path, retry_base_s=0.0, **kw)


def write_part(i: int) -> Turn:
    return Turn(tool_calls=(call("write_file", path=f"part{i}.txt", content=f"part {i}\n"),))


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def notices(events: list[AgentEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


def is_sub_request(request: dict[str, Any], task: str) -> bool:
    return request["messages"][1]["content"] == task


async def test_sub_agent_out_of_budget_reports_paused(tmp_path: Path, backend) -> None:
    fake = backend(
        [
            Turn(tool_calls=(call("delegate_task", task=PARTS_TASK),)),
            write_part(0),
            write_part(1),  # the sub-agent's only step budget ends here
            Turn(text="The sub-agent paused; part0 and part1 are written."),
        ]
    )
    config = cfg(tmp_path, max_steps=2, max_auto_continuations=0, subagent_max_resumes=0)
    events: list[AgentEvent] = []
    outcome = await run_task("Delegate the parts files", config, model=fake.model,
                             task_id="parent", on_event=events.append)

    [result] = tool_messages(fake.requests[3])
    assert result == (
        "paused: sub-agent parent.1 stopped — its step budget ran out "
        "(2 steps, 0 automatic resumes). It is NOT done.\n"
        "Changes so far:\n"
        "+1 −0 part0.txt (created)\n"
        "+1 −0 part1.txt (created)\n"
        "Decide what to do next: finish the rest yourself, delegate a narrower task, "
        "or tell the user it is not done."
    )
    assert not result.startswith("completed")
    assert STEP_BUDGET_PAUSE not in result  # the user's resume hint is not the parent's
    assert [is_sub_request(r, PARTS_TASK) for r in fake.requests] == [False, True, True, False]
    assert "delegate_task" in fake.tool_names(0)
    assert "delegate_task" not in fake.tool_names(1)
    assert notices(events) == [
        f"[parent.1] sub-agent started: {PARTS_TASK}",
        "[parent.1] ✓ write_file: part0.txt",
        "[parent.1] ✓ write_file: part1.txt",
        "[parent.1] paused — its step budget ran out",
    ]
    # the parent's own run: its steps only, its change summary includes the sub-agent's files
    assert outcome.steps == 2
    assert {c.path for c in outcome.changes} == {"part0.txt", "part1.txt"}
    assert sum(isinstance(e, StepStarted) for e in events) == 2
    assert [e for e in events if isinstance(e, TaskFinished)] == [TaskFinished(outcome)]


async def test_paused_sub_agent_is_resumed_three_times_then_paused(
    tmp_path: Path, backend
) -> None:
    fake = backend(
        [
            Turn(tool_calls=(call("delegate_task", task=PARTS_TASK),)),
            *(write_part(i) for i in range(8)),  # two steps per budget: start + 3 resumes
            Turn(text="It paused after eight parts; tell the user."),
        ]
    )
    config = cfg(tmp_path, max_steps=2, max_auto_continuations=0)
    assert config.subagent_max_resumes == 3
    events: list[AgentEvent] = []
    outcome = await run_task("Delegate the parts files", config, model=fake.model,
                             task_id="parent", on_event=events.append)

    [result] = tool_messages(fake.requests[9])
    assert result.split("\n")[0] == (
        "paused: sub-agent parent.1 stopped — its step budget ran out "
        "(8 steps, 3 automatic resumes). It is NOT done."
    )
    assert [line for line in result.split("\n") if line.startswith("+")] == [
        f"+1 −0 part{i}.txt (created)" for i in range(8)
    ]
    assert [n for n in notices(events) if "resuming" in n] == [
        f"[parent.1] paused because its step budget ran out — resuming automatically ({n} of 3)…"
        for n in (1, 2, 3)
    ]
    # every resume continues the SAME session: earlier messages kept, one nudge per resume
    subs = [r["messages"] for r in fake.requests[1:9]]
    assert all(m[1]["content"] == PARTS_TASK for m in subs)
    for before, after in itertools.pairwise(subs):
        assert after[: len(before)] == before
    resumed_at = [
        i for i, m in enumerate(subs) if str(m[-1]["content"]).startswith(SUB_RESUME_NUDGE)
    ]
    assert resumed_at == [2, 4, 6]
    assert all((tmp_path / f"part{i}.txt").exists() for i in range(8))
    assert outcome.steps == 2


async def test_sub_agent_with_a_passing_check_reports_completed(tmp_path: Path, backend) -> None:
    task = "Write calc.add with a test"
    fake = backend(
        [
            Turn(tool_calls=(call("delegate_task", task=task),)),
            Turn(tool_calls=(call("create_file", path="calc.py", content=CALC),
                             call("create_file", path="test_calc.py", content=TEST_CALC))),
            Turn(tool_calls=(call("run_command", command="python -m pytest -q test_calc.py"),)),
            Turn(text="Added add() with a passing test."),
            Turn(text="The sub-agent built it."),  # the parent's gate wants its own check
            Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
            Turn(text="Verified: add() works."),
        ]
    )
    events: list[AgentEvent] = []
    outcome = await run_task("Build calc.add through a sub-agent", cfg(tmp_path),
                             model=fake.model, task_id="parent", on_event=events.append)

    [result] = tool_messages(fake.requests[4])
    assert result == (
        "completed: sub-agent parent.1 finished the task (3 steps, 0 automatic resumes).\n"
        "✓ Verified: python -m pytest -q test_calc.py ✓\n"
        "+2 −0 calc.py (created)\n"
        "+5 −0 test_calc.py (created)\n"
        "Its answer: Added add() with a passing test.\n"
        "Its changes are on disk now: run a passing check of your own after this call "
        "before you finish."
    )
    # the delegate call counts as the parent's latest change: its "done" needs a fresh check
    assert fake.requests[5]["tool_choice"] == "required"
    assert outcome.status == "completed", outcome.banner
    assert "✓ Verified: python -m pytest -q ✓" in outcome.banner
    assert {c.path for c in outcome.changes} == {"calc.py", "test_calc.py"}
    finished, forced = notices(events)[-2:]
    assert finished == "[parent.1] completed (3 steps)"
    assert forced.startswith("Checking my work")
    assert not any(isinstance(e, TextDelta) and "Added add()" in e.text for e in events)


async def test_a_check_before_the_delegation_is_stale_after_its_changes(
    tmp_path: Path, scripted_model
) -> None:
    (tmp_path / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    model = scripted_model(
        [
            Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
            Turn(tool_calls=(call("delegate_task", task="Write helper.py with VALUE = 1"),)),
            Turn(tool_calls=(call("create_file", path="helper.py", content="VALUE = 1\n"),)),
            Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
            Turn(text="helper.py is written."),
            Turn(text="All done."),  # the parent's check ran before the sub-agent's change
            Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
            Turn(text="Checked again."),
        ]
    )
    outcome = await run_task("Add helper.py through a sub-agent", cfg(tmp_path), model=model,
                             task_id="parent")
    assert model.requests[6].tool_choice == "required"
    assert outcome.status == "completed", outcome.banner
    assert [e.after_last_change for e in outcome.evidence] == [False, True]


async def test_each_delegation_gets_the_next_sub_id(tmp_path: Path, scripted_model) -> None:
    first, second = "What is in the empty folder?", "What time zone is used?"
    model = scripted_model(
        [
            Turn(tool_calls=(call("delegate_task", task=first),
                             call("delegate_task", task=second))),
            Turn(text="Nothing."),
            Turn(text="UTC."),
            Turn(text="Nothing there, and UTC."),
        ]
    )
    events: list[AgentEvent] = []
    outcome = await run_task("What do the helpers say?", cfg(tmp_path), model=model,
                             task_id="p", on_event=events.append)
    results = [str(m["content"]) for m in model.requests[3].messages if m["role"] == "tool"]
    assert results == [
        "completed: sub-agent p.1 finished the task (1 step, 0 automatic resumes).\n"
        "Response delivered · no file changes (snapshot-verified)\n"
        "Its answer: Nothing.",
        "completed: sub-agent p.2 finished the task (1 step, 0 automatic resumes).\n"
        "Response delivered · no file changes (snapshot-verified)\n"
        "Its answer: UTC.",
    ]
    assert outcome.status == "completed"
    assert [n.split("]")[0] for n in notices(events)] == ["[p.1", "[p.1", "[p.2", "[p.2"]


async def test_stop_during_a_sub_agent_aborts_the_parent(tmp_path: Path, scripted_model) -> None:
    parent_task = asyncio.current_task()
    assert parent_task is not None

    def stop_now(request: ModelRequest) -> Turn:
        assert asyncio.current_task() is not parent_task  # the sub-agent runs as its own task
        parent_task.cancel()  # the Stop button, pressed while the sub-agent streams
        return Turn(text="Still going.")

    model = scripted_model(
        [
            Turn(tool_calls=(call("delegate_task", task=PARTS_TASK),)),
            write_part(0),
            stop_now,
        ]
    )
    outcome = await run_task("Delegate the parts files", cfg(tmp_path), model=model,
                             task_id="parent")
    assert outcome.status == "aborted"
    assert [c.path for c in outcome.changes] == ["part0.txt"]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        pytest.param({"max_steps": 1, "max_auto_continuations": 1, "subagent_max_resumes": 1},
                     2, id="parent-continuations-do-not-apply-one-resume"),
        pytest.param({"max_steps": 2, "max_auto_continuations": 0, "subagent_max_resumes": 1},
                     4, id="two-steps-one-resume"),
    ],
)
async def test_sub_agent_step_allowance(tmp_path: Path, scripted_model, kwargs, expected) -> None:
    """A sub-agent gets one budget, plus one fresh budget per automatic resume; the
    parent's automatic continuations do not apply to it."""
    model = scripted_model(
        [
            Turn(tool_calls=(call("delegate_task", task=PARTS_TASK),)),
            *(write_part(i) for i in range(expected)),
            Turn(text="Paused."),
        ]
    )
    await run_task("Delegate the parts files", cfg(tmp_path, **kwargs), model=model,
                   task_id="parent")
    [result] = [str(m["content"]) for m in model.requests[-1].messages if m["role"] == "tool"]
    assert result.startswith(
        f"paused: sub-agent parent.1 stopped — its step budget ran out ({expected} steps, "
        "1 automatic resume). It is NOT done."
    )


async def test_stopping_only_the_sub_agent_tells_the_parent_it_was_aborted(
    tmp_path: Path, scripted_model
) -> None:
    def stop_the_sub_agent(request: ModelRequest) -> Turn:
        task = asyncio.current_task()
        assert task is not None and task.get_name() == "mercury:parent.1"
        task.cancel()  # a stop request for parent.1 alone
        return Turn(text="Still going.")

    model = scripted_model(
        [
            Turn(tool_calls=(call("delegate_task", task=PARTS_TASK),)),
            write_part(0),
            stop_the_sub_agent,
            Turn(text="The sub-agent was stopped after part0.txt; the rest is not done."),
        ]
    )
    outcome = await run_task("Delegate the parts files", cfg(tmp_path), model=model,
                             task_id="parent")
    [result] = [str(m["content"]) for m in model.requests[-1].messages if m["role"] == "tool"]
    assert result.startswith("aborted: sub-agent parent.1 stopped — it was stopped")
    assert outcome.status != "aborted"  # the parent went on and ended on its own terms
    assert (tmp_path / "part0.txt").read_text() == "part 0\n"


def test_a_sub_agent_gets_every_tool_but_delegate_task() -> None:
    parent = default_registry()
    pick = {name: parent.get(name) for name in ("read_file", "delegate_task", "run_command")}
    planted = ToolRegistry([tool for tool in pick.values() if tool is not None])
    sub = subagent_registry(planted)
    assert sub.names() == ("read_file", "run_command")
    assert (sub.get("read_file"), sub.get("run_command")) == (pick["read_file"],
                                                              pick["run_command"])
    assert "delegate_task" in parent and "delegate_task" not in subagent_registry(parent)
    assert "run_command" in subagent_registry(parent)


def test_the_sub_agent_sink_forwards_prefixed_notices_only() -> None:
    seen: list[AgentEvent] = []
    forward = subagent_sink("abc.1", seen.append)
    for event in (
        StepStarted(1, 75, "m"),
        TextDelta("thinking out loud"),
        ToolStarted(1, "create_file", "create_file: a.py"),
        ToolFinished(1, "create_file", True, "create_file: a.py"),
        ToolFinished(2, "run_command", False, "run_command: pytest -q"),
        Notice("Checking my work…"),
        TurnEnded("abc.1", "text-stop", "finish", dict),
    ):
        forward(event)
    assert seen == [
        Notice("[abc.1] ✓ create_file: a.py", "subagent"),
        Notice("[abc.1] ✗ run_command: pytest -q", "subagent"),
        Notice("[abc.1] Checking my work…", "subagent"),
    ]
