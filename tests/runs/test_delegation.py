"""delegate_task through the runs layer: each sub-agent is a task of its own in the ledger,
stoppable alone, stopped with its parent, numbered on after a resume, and never picked by a
plain "continue"."""

from __future__ import annotations

from pathlib import Path

from crossproc import ended, pid_in, wait_for

from mercury_nb import runs
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.records import TaskHeader
from mercury_nb.ledger.store import Ledger
from mercury_nb.testing import Turn, call
from mercury_nb.testing.orphans import alive

SUB_TASK = "Write the parts files part0.txt to part3.txt"


def wait_command(folder: Path) -> str:
    """A shell with a background child, both waiting; their pids go to ``folder`` (outside
    the workspace: no file change there)."""
    return f"sleep 300 & echo $! > {folder}/child.pid; echo $$ > {folder}/shell.pid; wait"


def tree(folder: Path) -> list[int] | None:
    """Both pids, or None while the shell is still writing them (a file can exist empty)."""
    pids = [pid_in(folder / name) for name in ("shell.pid", "child.pid")]
    return None if None in pids else [pid for pid in pids if pid is not None]


def config(tmp_path: Path, home: Path, model_name: str, **kw: object) -> MercuryConfig:
    workdir = tmp_path / "ws"
    workdir.mkdir(exist_ok=True)
    return MercuryConfig(permissions="auto",
                         workdir=workdir, home=home, model=model_name, retry_base_s=0.0,
                         **kw)  # type: ignore[arg-type]


def tool_results(model) -> list[str]:
    return [str(m["content"]) for m in model.requests[-1].messages if m["role"] == "tool"]


def row(home: Path, task_id: str):
    found = runs.task_detail(task_id, home=home)  # after this process's queued writes
    return found.record if found is not None else None


async def started(run_or_refusal) -> runs.Run:
    assert isinstance(run_or_refusal, runs.Run), run_or_refusal
    return run_or_refusal


async def test_a_sub_agent_is_a_task_of_its_own_in_the_ledger(
    home: Path, tmp_path: Path, scripted_model
) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("delegate_task", task="What is in the empty folder?"),)),
        Turn(text="Nothing."),
        Turn(text="The folder is empty."),
    ])
    run = await started(await runs.start("Ask a helper", config(tmp_path, home, model.name),
                                         model=model))
    outcome = await run.outcome()
    assert outcome.status == "completed"
    sub_id = f"{run.task_id}.1"
    detail = runs.task_detail(run.task_id, home=home)
    assert detail is not None
    assert [sub.id for sub in detail.subagents] == [sub_id]
    sub = runs.task_detail(sub_id, home=home)
    assert sub is not None
    assert (sub.record.parent, sub.record.task, sub.record.status) == (
        run.task_id, "What is in the empty folder?", "completed")
    assert sub.record.answer == "Nothing."
    kinds = [event.kind for event in sub.events]
    assert kinds[0] == "task-started" and kinds[-1] == "task-finished"
    assert detail.record.parent is None
    assert {r.id for r in runs.list_tasks(home=home)} == {run.task_id, sub_id}


async def test_a_stop_request_for_the_sub_agent_alone_ends_only_it(
    home: Path, tmp_path: Path, scripted_model
) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("delegate_task", task=SUB_TASK),)),
        Turn(tool_calls=(call("run_command", command=wait_command(tmp_path)),)),
        Turn(text="The helper was stopped before it found anything."),
    ])
    run = await started(await runs.start("What does a helper find in this folder?",
                                         config(tmp_path, home, model.name), model=model))
    await wait_for(lambda: tree(tmp_path) is not None, "the sub-agent's command")
    pids = tree(tmp_path)
    assert pids is not None
    sub_id = f"{run.task_id}.1"
    other = Ledger(home / "ledger.sqlite3")  # like another process: its own connection
    try:
        await wait_for(lambda: (r := other.get(sub_id)) is not None and r.status == "running",
                       "the sub-agent's running row")
        assert other.request_stop(sub_id)
        await wait_for(lambda: other.get(sub_id).status == "aborted", "the sub-agent's end")
    finally:
        other.close()
    outcome = await ended(run.task, "the parent to go on and end")
    await wait_for(lambda: not any(alive(pid) for pid in pids), "the command's process tree to go",
                   timeout=2)
    [result] = tool_results(model)
    assert result.startswith(f"aborted: sub-agent {sub_id} stopped — it was stopped")
    assert outcome.status != "aborted", outcome.banner  # the parent was not stopped
    assert row(home, run.task_id).status == outcome.status


async def test_stopping_the_parent_ends_its_running_sub_agent(
    home: Path, tmp_path: Path, scripted_model
) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("delegate_task", task=SUB_TASK),)),
        Turn(tool_calls=(call("run_command", command=wait_command(tmp_path)),)),
    ])
    run = await started(await runs.start("Delegate the parts files",
                                         config(tmp_path, home, model.name), model=model))
    await wait_for(lambda: tree(tmp_path) is not None, "the sub-agent's command")
    pids = tree(tmp_path)
    assert pids is not None
    sub_id = f"{run.task_id}.1"
    await wait_for(lambda: (r := row(home, sub_id)) is not None and r.status == "running",
                   "the sub-agent's running row")
    reply = runs.request_stop(run.task_id, home=home)
    assert reply.kind == "requested"
    outcome = await ended(run.task, "the stopped parent to end")
    assert (outcome.status, outcome.verdict) == ("aborted", "aborted")
    await wait_for(lambda: row(home, sub_id).status == "aborted", "the sub-agent's end")
    await wait_for(lambda: not any(alive(pid) for pid in pids), "the command's process tree to go",
                   timeout=2)


async def test_a_resumed_parent_numbers_its_next_sub_agent_after_the_earlier_ones(
    home: Path, tmp_path: Path, scripted_model
) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("delegate_task", task="What is in the empty folder?"),)),
        Turn(text="Nothing."),
        Turn(tool_calls=(call("list_files", path="."),)),  # the parent's budget runs out
        Turn(tool_calls=(call("delegate_task", task="What time zone is used?"),)),
        Turn(text="UTC."),
        Turn(text="The folder is empty and the time zone is UTC."),
    ])
    cfg = config(tmp_path, home, model.name, max_steps=2, max_auto_continuations=0)
    first = await started(await runs.start("Ask two helpers", cfg, model=model))
    assert (await first.outcome()).status == "paused"
    resumed = await started(await runs.continue_task(first.task_id, cfg, model=model))
    assert (await resumed.outcome()).status == "completed"
    detail = runs.task_detail(first.task_id, home=home)
    assert detail is not None
    assert [(s.id, s.task) for s in detail.subagents] == [
        (f"{first.task_id}.1", "What is in the empty folder?"),
        (f"{first.task_id}.2", "What time zone is used?"),
    ]


def test_plain_continue_never_picks_a_paused_sub_agent(home: Path, tmp_path: Path) -> None:
    workspace = str(tmp_path.resolve())
    ledger = Ledger(home / "ledger.sqlite3")
    parent = TaskHeader("aaaaaa000001", "Build it", workspace, ("m",))
    sub = TaskHeader("aaaaaa000001.1", "Write the parts", workspace, ("m",),
                     parent=parent.id)
    for header, status in ((parent, "completed"), (sub, "paused")):
        ledger.start_task(header)
        ledger.finish_task(header, status=status, verdict=None, banner=None, blocker="budget",
                           changes="[]", evidence="[]", steps=1)
    ledger.close()
    cfg = MercuryConfig(workdir=tmp_path, home=home)
    refusal = runs.resolve(runs.RunRequest(resume=True, config=cfg, report=lambda line: None))
    assert isinstance(refusal, runs.Refusal) and refusal.kind == "nothing-to-continue"
    again = runs.resolve(runs.RunRequest(task="Write the parts", config=cfg,
                                         report=lambda line: None))
    assert isinstance(again, runs.PlannedRun)  # the sub-agent's text is no paused duplicate


def test_show_task_finds_by_prefix_lists_sub_agents_and_refuses_unknown_or_ambiguous(
    home: Path, tmp_path: Path
) -> None:
    handle = runs.ledger_for(MercuryConfig(workdir=tmp_path, home=home), lambda line: None)
    assert handle is not None
    for task_id, parent in (("abc123000001", None), ("abc123000001.1", "abc123000001"),
                            ("abc123000002", None)):
        handle.ledger.start_task(TaskHeader(task_id, "t", str(tmp_path), ("m",), parent=parent))
    shown = runs.show_task(handle, "abc123000001")
    assert isinstance(shown, runs.TaskDetail)
    assert [sub.id for sub in shown.subagents] == ["abc123000001.1"]
    assert [event.kind for event in shown.event_rows] == ["task-started"]
    ambiguous = runs.show_task(handle, "abc123")
    assert isinstance(ambiguous, runs.Refusal) and "matches several tasks" in ambiguous.message
    unknown = runs.show_task(handle, "ffffff")
    assert isinstance(unknown, runs.Refusal) and "There is no task 'ffffff'" in unknown.message
    assert len(runs.recent_tasks(handle, 1)) == 1
    assert {r.id for r in runs.recent_tasks(handle)} == {
        "abc123000001", "abc123000001.1", "abc123000002"}
