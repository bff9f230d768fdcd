"""The kernel goes through the one door: a request with a kernel gets its tools and its
``@name`` attachments; one without (the CLI, the panel) gets neither, and a note instead."""

from __future__ import annotations

from pathlib import Path

from mercury_nb.agent.events import AgentEvent, Notice, TaskStarted
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.runs.lookup import Refusal
from mercury_nb.runs.request import RunRequest
from mercury_nb.runs.runner import runner
from mercury_nb.testing import ScriptedModel, Turn
from mercury_nb.tools.kernel_access import NamespaceKernel
from mercury_nb.tools.variables import NO_KERNEL

KERNEL_TOOLS = {"inspect_variables", "run_in_kernel"}


def offered(model: ScriptedModel) -> set[str]:
    return {tool["function"]["name"] for tool in model.requests[0].tools}


async def run(tmp_path: Path, kernel: NamespaceKernel | None
              ) -> tuple[ScriptedModel, list[AgentEvent]]:
    model = ScriptedModel([Turn(text="It holds sales by month.")], name="scripted/door")
    events: list[AgentEvent] = []
    outcome = await runner.run(RunRequest(
        task="What does @sales hold?", config=MercuryConfig(workdir=tmp_path, model=model.name),
        model=model, recorded=False, kernel=kernel, sink=events.append))
    assert not isinstance(outcome, Refusal)
    return model, events


async def test_without_a_kernel_the_tools_are_absent_and_at_name_gets_a_note(
        tmp_path: Path) -> None:
    model, events = await run(tmp_path, None)
    assert not KERNEL_TOOLS & offered(model)
    note = f"@sales: {NO_KERNEL}."
    assert note in model.requests[0].messages[1]["content"]
    assert Notice(note) in events
    (started,) = [e for e in events if isinstance(e, TaskStarted)]
    assert started.attached == ()


async def test_with_a_kernel_the_tools_are_offered_and_the_variable_attached(
        tmp_path: Path) -> None:
    model, events = await run(tmp_path, NamespaceKernel({"sales": [10, 20]}))
    assert offered(model) >= KERNEL_TOOLS
    first = model.requests[0].messages[1]["content"]
    assert first.endswith("attached for @sales:\nsales: list · len 2 = [10, 20]")
    (started,) = [e for e in events if isinstance(e, TaskStarted)]
    assert started.attached == ("sales",)
    assert not [e for e in events if isinstance(e, Notice) and "@sales" in e.text]
