"""Spending budgets in the loop: scripted usage, the pause at the right step, a continue with a
higher budget, usage across continues and sub-agents, and what the step starts report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import AgentEvent, Notice, StepStarted, TurnEnded
from mercury_nb.agent.resume import resume_task
from mercury_nb.agent.task import run_new_session as run_task
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.runs import run_task as run_through_the_door
from mercury_nb.runs.settings import plan
from mercury_nb.testing import Turn, call
from mercury_nb.transport import prices

PLANTED = {"acme-pro": {"input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05}}
CALC = "def add(a, b):\n    return a + b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
STEP_USAGE = (80_000, 6_000)
"""One step on acme-pro: 80,000 x $2.50/M + 6,000 x $10/M = $0.26."""


@pytest.fixture
def planted_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prices, "bundled_table", lambda: PLANTED)


def write(name: str, usage: tuple[int, int]) -> Turn:
    return Turn(tool_calls=(call("write_file", path=name, content=f"{name}\n"),), usage=usage)


def last_checkpoint(events: list[AgentEvent]) -> dict[str, Any]:
    turns = [event for event in events if isinstance(event, TurnEnded)]
    data: dict[str, Any] = json.loads(json.dumps(turns[-1].checkpoint()))
    return data


def step_tokens(events: list[AgentEvent]) -> list[int]:
    return [event.tokens for event in events if isinstance(event, StepStarted)]


async def test_a_token_budget_pauses_before_the_step_that_would_exceed_it(
    tmp_path: Path, scripted_model
) -> None:
    model = scripted_model([write(f"{n}.txt", (1000, 200)) for n in "abc"])  # never a 4th
    events: list[AgentEvent] = []
    outcome = await run_task("Write a.txt, b.txt, c.txt and d.txt",
                             MercuryConfig(permissions="auto",
                                           workdir=tmp_path, max_tokens=3000), model=model,
                             on_event=events.append)
    # 0, 1,200 and 2,400 tokens before steps 1-3 go on; 3,600 before step 4 pause it
    assert (outcome.status, outcome.resumable, outcome.steps) == ("paused", True, 3)
    assert len(model.requests) == 3
    assert step_tokens(events) == [0, 1200, 2400]
    assert outcome.banner.split("\n")[0] == (
        "I've paused — budget reached: 3.6k of 3k tokens used (no price known for "
        "scripted/test: tokens only).")
    assert outcome.blocker == ("budget reached: 3.6k of 3k tokens used (no price known for "
                               "scripted/test: tokens only)")
    assert [c.path for c in outcome.changes] == ["a.txt", "b.txt", "c.txt"]
    assert outcome.usage["scripted/test"].total_tokens == 3600
    assert (outcome.cost_usd, outcome.unpriced) == (None, ["scripted/test"])


async def test_a_cost_budget_pauses_and_a_continue_with_a_higher_budget_completes(
    tmp_path: Path, scripted_model, planted_prices: None
) -> None:
    model = scripted_model([write("a.txt", STEP_USAGE), write("b.txt", STEP_USAGE)],
                           name="acme-pro")  # never asked a third time
    events: list[AgentEvent] = []
    config = MercuryConfig(permissions="auto", workdir=tmp_path, max_cost_usd=0.5)
    outcome = await run_task("Write a.txt and b.txt", config, model=model,
                             on_event=events.append)
    assert (outcome.status, outcome.steps, len(model.requests)) == ("paused", 2, 2)
    assert outcome.banner.split("\n")[:2] == [
        "I've paused — budget reached: $0.52 of $0.50 spent.",
        "To go on, continue with a higher budget: --max-cost USD (or MERCURY_MAX_COST_USD)."]
    assert outcome.cost_usd == pytest.approx(0.52)
    assert outcome.unpriced == []
    data = last_checkpoint(events)

    # the same budget: paused again before any request, nothing spent
    again = scripted_model([], name="acme-pro")  # any request fails the test
    same = await resume_task(data, plan({}, checkpoint=data), model=again)
    assert (same.status, same.steps, again.requests) == ("paused", 2, [])
    assert same.banner.startswith("I've paused — budget reached: $0.52 of $0.50 spent.")

    # a higher budget goes on: the usage of the first run still counts
    rest = scripted_model([Turn("Both files are written.", usage=STEP_USAGE)], name="acme-pro")
    resumed_events: list[AgentEvent] = []
    done = await resume_task(data, plan({"max_cost_usd": 1.0}, checkpoint=data), model=rest,
                             on_event=resumed_events.append)
    assert done.status == "completed", done.banner
    assert done.steps == 3
    assert step_tokens(resumed_events) == [2 * sum(STEP_USAGE)]
    used = done.usage["acme-pro"]
    assert (used.prompt_tokens, used.completion_tokens) == (240_000, 18_000)
    assert done.cost_usd == pytest.approx(0.78)


async def test_usage_survives_a_checkpoint_and_a_continue(tmp_path: Path, scripted_model) -> None:
    model = scripted_model([write("a.txt", (300, 20))])
    events: list[AgentEvent] = []
    first = await run_task("Write a.txt and b.txt", MercuryConfig(permissions="auto",
        workdir=tmp_path, max_steps=1, max_auto_continuations=0), model=model,
        on_event=events.append)
    assert first.status == "paused"
    data = last_checkpoint(events)
    assert data["usage"] == {"scripted/test": [300, 20]}
    rest = scripted_model([write("b.txt", (400, 30)), Turn("Done.", usage=(500, 40))])
    done = await resume_task(data, plan({"max_steps": 5}, checkpoint=data), model=rest)
    used = done.usage["scripted/test"]
    assert (used.prompt_tokens, used.completion_tokens) == (1200, 90)


async def test_a_sub_agents_tokens_count_in_its_parent_and_its_budget(
    tmp_path: Path, scripted_model
) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("delegate_task", task="Write part0.txt and part1.txt"),),
             usage=(1000, 0)),
        write("part0.txt", (1000, 0)),  # the sub-agent's steps, on the same model
        write("part1.txt", (1000, 0)),
    ])
    events: list[AgentEvent] = []
    outcome = await run_through_the_door(
        "Delegate the parts", MercuryConfig(permissions="auto",
                                            workdir=tmp_path, max_tokens=2500), model=model,
        task_id="parent", on_event=events.append)
    # the sub-agent starts its second step at 2,000 tokens (the parent's 1,000 count) and
    # pauses before its third at 3,000; the parent then pauses before its second step
    assert len(model.requests) == 3
    assert outcome.status == "paused"
    assert outcome.banner.startswith("I've paused — budget reached: 3k of 2.5k tokens used")
    assert outcome.usage["scripted/test"].prompt_tokens == 3000
    texts = [e.text for e in events if isinstance(e, Notice)]
    assert any(t.startswith("[parent.1] paused — the task's budget reached: 3k of 2.5k")
               for t in texts), texts


async def test_a_parents_usage_includes_its_sub_agents(tmp_path: Path, scripted_model) -> None:
    step = (100, 10)
    model = scripted_model([
        Turn(tool_calls=(call("delegate_task", task="Write calc.add with a test"),), usage=step),
        Turn(tool_calls=(call("create_file", path="calc.py", content=CALC),
                         call("create_file", path="test_calc.py", content=TEST_CALC)),
             usage=step),  # the sub-agent's three steps
        Turn(tool_calls=(call("run_command", command="python -m pytest -q test_calc.py"),),
             usage=step),
        Turn(text="Added add() with a passing test.", usage=step),
        Turn(text="The sub-agent built it.", usage=step),  # the parent's own check follows
        Turn(tool_calls=(call("run_command", command="python -m pytest -q"),), usage=step),
        Turn(text="Verified: add() works.", usage=step),
    ])
    outcome = await run_through_the_door("Build calc.add through a sub-agent",
                                         MercuryConfig(permissions="auto",
                                                       workdir=tmp_path), model=model,
                                         task_id="parent")
    assert outcome.status == "completed", outcome.banner
    used = outcome.usage["scripted/test"]
    # its own 4 steps and its sub-agent's 3
    assert (used.prompt_tokens, used.completion_tokens) == (700, 70)
    assert outcome.steps == 4


async def test_a_local_model_under_a_cost_budget_is_said_to_count_tokens_only(
    tmp_path: Path, scripted_model
) -> None:
    model = scripted_model([write("a.txt", (10, 2)), Turn("Done.", usage=(10, 2))])
    events: list[AgentEvent] = []
    outcome = await run_task("Write a.txt", MercuryConfig(permissions="auto",
                                                          workdir=tmp_path, max_cost_usd=0.01),
                             model=model, on_event=events.append)
    assert outcome.status == "completed", outcome.banner
    texts = [e.text for e in events if isinstance(e, Notice)]
    assert texts.count("No price is known for scripted/test (local model): the cost budget "
                       "counts its tokens as tokens only; --max-tokens caps them.") == 1


async def test_a_budget_with_a_provider_that_reports_no_usage_is_said_once(
    tmp_path: Path, scripted_model
) -> None:
    model = scripted_model([write("a.txt", None), write("b.txt", None), Turn("Done.")])
    events: list[AgentEvent] = []
    outcome = await run_task("Write a.txt and b.txt", MercuryConfig(permissions="auto",
                                                                    workdir=tmp_path,
                                                                    max_tokens=10),
                             model=model, on_event=events.append)
    assert outcome.status == "completed", outcome.banner
    texts = [e.text for e in events if isinstance(e, Notice)]
    assert texts.count("scripted/test reports no token usage: the budget cannot count what "
                       "its replies use.") == 1


async def test_each_step_start_says_how_full_the_context_is(tmp_path: Path,
                                                            scripted_model) -> None:
    big = Turn(tool_calls=(call("write_file", path="a.txt", content="x" * 20_000),))
    model = scripted_model([big, Turn("Done.")])
    events: list[AgentEvent] = []
    await run_task("Write a.txt", MercuryConfig(permissions="auto",
                                                workdir=tmp_path, context_window=32768),
                   model=model, on_event=events.append)
    shares = [e.context for e in events if isinstance(e, StepStarted)]
    assert len(shares) == 2
    assert all(isinstance(share, int) and 0 < share < 100 for share in shares), shares
    assert shares[1] > shares[0]  # the conversation grew by the first step
