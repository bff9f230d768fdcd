"""Two tasks in one workspace: the second is refused while the first runs (chat allowed), so
the first task's change summary never lists the second's files."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import LedgerHandle, open_ledger
from mercury_nb.ledger.owner import Owner
from mercury_nb.ledger.records import TaskHeader
from mercury_nb.runs.planning import PlannedRun, Refusal, occupy, plan_continue, plan_task
from mercury_nb.testing import ScriptedModel, Turn, call
from mercury_nb.transport.protocol import ModelRequest


@pytest.fixture
def handle(home: Path) -> LedgerHandle:
    return open_ledger(home)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def planned(handle: LedgerHandle, task: str, config: MercuryConfig) -> PlannedRun | Refusal:
    """A new task planned and placed in its workspace, as the door does."""
    found = plan_task(handle, task, config)
    return found if isinstance(found, Refusal) else occupy(found)


def running(handle: LedgerHandle, task_id: str, workspace: Path, owner: Owner | None = None,
            status: str | None = None) -> None:
    header = TaskHeader(id=task_id, task="Build the site", workspace=str(workspace.resolve()),
                        models=("openai/a",))
    handle.ledger.start_task(header, owner=owner)
    if status is not None:
        handle.ledger.finish_task(header, status=status, verdict="steps-exhausted",
                                  banner="paused", blocker=None, changes="[]", evidence="[]",
                                  steps=1)


def test_a_task_is_refused_while_another_runs_in_its_workspace(
    handle: LedgerHandle, workspace: Path, tmp_path: Path
) -> None:
    running(handle, "run1", workspace)
    refused = planned(handle, "Add a blog", MercuryConfig(workdir=workspace))
    assert isinstance(refused, Refusal)
    assert (refused.kind, refused.paused) == ("workspace-busy", False)
    assert refused.record is not None and refused.record.id == "run1"
    assert "run1" in refused.message and "python -m mercury_nb stop run1" in refused.message
    assert "%mercury stop run1" in refused.message
    question = planned(handle, "What is in here?", MercuryConfig(workdir=workspace, mode="chat"))
    assert isinstance(question, PlannedRun)
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    assert isinstance(planned(handle, "Add a blog", MercuryConfig(workdir=elsewhere)),
                      PlannedRun)


def test_a_refusal_names_the_running_parent_not_its_sub_agent(
    handle: LedgerHandle, workspace: Path
) -> None:
    running(handle, "run1", workspace)
    handle.ledger.start_task(TaskHeader(id="run1.1", task="Write the page",
                                        workspace=str(workspace.resolve()),
                                        models=("openai/a",), parent="run1"))
    handle.ledger.add_event(TaskHeader("run1.1", "Write the page", str(workspace.resolve()),
                                       ("openai/a",), parent="run1"), "notice", "newest")
    refused = planned(handle, "Add a blog", MercuryConfig(workdir=workspace))
    assert isinstance(refused, Refusal) and refused.record is not None
    assert refused.record.id == "run1"


def test_continue_is_refused_too_but_a_dead_owner_does_not_count(
    handle: LedgerHandle, workspace: Path
) -> None:
    running(handle, "paused1", workspace, status="paused")
    running(handle, "run1", workspace)
    refused = plan_continue(handle, "paused1", MercuryConfig(workdir=workspace))
    assert isinstance(refused, Refusal) and refused.kind == "workspace-busy"
    assert handle.ledger.get("paused1").status == "paused"  # not claimed
    running(handle, "ghost", workspace.parent / "ws2", owner=Owner(pid=2**22 + 7, token="x"))
    (workspace.parent / "ws2").mkdir()
    assert isinstance(planned(handle, "Add a blog", MercuryConfig(workdir=workspace.parent /
                                                                    "ws2")), PlannedRun)


class Held(ScriptedModel):
    """Holds its second request until ``release`` is set; ``waiting`` tells it got there."""

    def __init__(self, turns: list[Turn], name: str) -> None:
        super().__init__(turns, name=name)
        self.calls = 0
        self.waiting, self.release = asyncio.Event(), asyncio.Event()

    def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        return self._held(request)

    async def _held(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == 2:
            self.waiting.set()
            await self.release.wait()
        async for chunk in ScriptedModel.stream(self, request):
            yield chunk


async def test_the_first_tasks_change_summary_never_lists_the_second_tasks_files(
    handle: LedgerHandle, workspace: Path
) -> None:
    config = MercuryConfig(workdir=workspace, mode="execute")
    first = Held([Turn(tool_calls=(call("create_file", path="a.md", content="# A\n"),)),
                  Turn(text="Wrote a.md.")], name="scripted/a")
    plan_a = planned(handle, "Write a.md", config)
    assert isinstance(plan_a, PlannedRun)
    task_a = asyncio.create_task(plan_a.run(lambda event: None, model=first))
    await first.waiting.wait()
    handle.flush()

    plan_b = planned(handle, "Write b.md", config)
    if isinstance(plan_b, PlannedRun):  # without the refusal, b runs while a is running
        second = ScriptedModel([Turn(tool_calls=(call("create_file", path="b.md",
                                                      content="# B\n"),)),
                                Turn(text="Wrote b.md.")], name="scripted/b")
        await plan_b.run(lambda event: None, model=second)
    first.release.set()
    outcome = await task_a
    assert [c.path for c in outcome.changes] == ["a.md"]
    assert isinstance(plan_b, Refusal) and plan_a.task_id in plan_b.message


async def test_two_tasks_started_back_to_back_in_one_workspace_one_is_refused(
    home: Path, workspace: Path
) -> None:
    """No await between the two starts: the first task's row is not yet written by its
    recorder, so only the ledger transaction that takes the workspace can refuse the
    second."""
    from mercury_nb import runs

    config = MercuryConfig(workdir=workspace, home=home, model="scripted/a")
    turns = [Turn(tool_calls=(call("create_file", path="a.md", content="# A\n"),)),
             Turn(text="Wrote a.md.")]
    first = await runs.start("Write a.md", config, model=ScriptedModel(turns, name="scripted/a"))
    second = await runs.start("Write b.md", config,
                              model=ScriptedModel(turns, name="scripted/a"))
    assert isinstance(first, runs.Run)
    assert isinstance(second, Refusal) and second.kind == "workspace-busy"
    assert first.task_id in second.message
    await first.task
    third = await runs.start("Write c.md", config, model=ScriptedModel(turns, name="scripted/a"))
    assert isinstance(third, runs.Run)  # the first one ended: the workspace is free again
    await third.task


def test_a_start_that_fails_before_its_task_runs_gives_the_workspace_back(
    home: Path, workspace: Path
) -> None:
    from mercury_nb import runs
    from mercury_nb.ledger.store import Ledger

    def broken_view(config: MercuryConfig):  # type: ignore[no-untyped-def]
        raise RuntimeError("the widget could not be built")

    request = runs.RunRequest(task="Write a.md", config=MercuryConfig(workdir=workspace,
                                                                      home=home),
                              view_for=broken_view)
    with pytest.raises(RuntimeError):
        runs.submit(request, loop=asyncio.new_event_loop())
    other = Ledger(home / "ledger.sqlite3")
    try:
        assert other.find(workspace=str(workspace.resolve())) == []
    finally:
        other.close()
