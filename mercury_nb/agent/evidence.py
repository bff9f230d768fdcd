"""Measures what a turn did on disk and judges its evidence, for the pure turn router."""

from __future__ import annotations

import asyncio
import json
import os
import random
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, assert_never

from mercury_nb.agent.events import ToolFinished, ToolStarted
from mercury_nb.agent.kernel_evidence import edited_cells, kernel_runs
from mercury_nb.agent.loop_parts import LoopParts
from mercury_nb.agent.notebook_process import run_notebook_check
from mercury_nb.agent.permission_gate import permission_for
from mercury_nb.agent.session import ReadBackEntry, TaskSession, ToolLogEntry
from mercury_nb.agent.turn_report import (
    CannotFit,
    Ended,
    Interrupted,
    Looped,
    NeedsPermission,
    OverBudget,
    Pressured,
    ProviderFailed,
    Stalled,
    TurnReport,
)
from mercury_nb.contract.endings import Blocker
from mercury_nb.contract.gate.file_kinds import only_non_code
from mercury_nb.contract.gate.kernel_cells import covered_notebooks, notebook_evidence
from mercury_nb.contract.gate.run_evidence import run_answer
from mercury_nb.contract.gate.task_reading import read_task
from mercury_nb.contract.gate.task_requirements import TaskRequirements
from mercury_nb.contract.gate.verification import CheckRecord, judge_evidence, touches_notebooks
from mercury_nb.contract.turns.final_reply import answer_of
from mercury_nb.contract.turns.router_state import Measured, RouterState, TurnFacts, Unreadable
from mercury_nb.contract.turns.turn_verdict import TurnVerdict
from mercury_nb.contract.user_denials import denied_reason
from mercury_nb.transport.context_window import reported_tool_support
from mercury_nb.workspace.changes import ChangeReport, measure_changes
from mercury_nb.workspace.confinement import Workspace
from mercury_nb.workspace.errors import WorkspaceError
from mercury_nb.workspace.reading import FileTooLarge, digest_fd, open_file, refusal

if TYPE_CHECKING:
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.workspace.snapshot import Snapshot


class MeasuredLoop(LoopParts, Protocol):
    """What gathering a turn's facts uses of the loop: its parts (the workspace through the
    tool context), the start snapshot and the config."""

    snapshot: Snapshot
    state: RouterState | None
    """The router's state: the task's requirements, read once when it started."""

    @property
    def config(self) -> MercuryConfig: ...


def check_records(session: TaskSession) -> list[CheckRecord]:
    return [
        CheckRecord(
            command=e.command or e.summary, exit_code=e.exit_code, seq=e.seq,
            kind="notebook" if e.notebook_ran else "command", timed_out=e.timed_out,
            path=e.notebook_run or "", failure=e.cell_error, partial=bool(e.cells_run),
        )
        for e in session.tool_log
        if e.command is not None or e.name == "notebook_check"
    ]


async def gather_turn_facts(
    loop: MeasuredLoop, report: TurnReport, *, forced: bool, called_tools: bool,
) -> TurnFacts:
    """The router's facts of ``report``; a prose stop is measured on disk first.
    ``forced``: the turn's first step required a tool call; ``called_tools``: the model
    made one during the turn (both set by the loop, for every report)."""
    session = loop.session
    failed = session.last_failed_mutation
    base = TurnFacts(
        verdict=TurnVerdict.INTERRUPTED, jitter=random.random(),
        mutations_in_task=session.successful_mutations_since(0),
        last_failed_mutation=Blocker(failed.name, failed.result_head) if failed else None,
        forced=forced, called_tools=called_tools, investigations=session.investigations,
        user_denied=session.user_denied is not None,
        tools_reported=await reported_tool_support(loop.model),  # asked once per server
    )
    match report:
        case Ended(verdict=verdict, reply=reply, reply_cap=cap, finish=finish):
            text = answer_of(finish) if finish is not None else reply.text
            facts = replace(base, verdict=verdict, reply_text=text, finish=finish, reply_cap=cap)
            if verdict is TurnVerdict.TEXT_STOP:
                facts = await _measured(loop, facts)
                needed = loop.session.permission_needed  # the check's run was not allowed
                return facts if needed is None else replace(facts, permission_pause=needed)
            if verdict is TurnVerdict.TRUNCATED and reply.tool_calls:
                return replace(facts, cut_write=True,
                               cut_write_path=_path_hint(reply.tool_calls[0].arguments))
            return facts
        case Interrupted(reply=reply, trouble=trouble, reply_cap=cap):
            return replace(base, reply_text=reply.text, trouble=trouble, reply_cap=cap)
        case ProviderFailed(trouble=trouble):
            return replace(base, trouble=trouble)
        case Stalled(reply=reply, trouble=trouble):
            return replace(base, reply_text=reply.text, trouble=trouble)
        case Looped(loop=doom, reply=reply, trouble=trouble):
            return replace(base, reply_text=reply.text, trouble=trouble, doom=doom)
        case Pressured(why=why):
            return replace(base, pressure_pause=why)
        case CannotFit(ending=ending):
            return replace(base, window_too_small=ending)
        case OverBudget(hit=hit):
            return replace(base, budget_hit=hit)
        case NeedsPermission(why=why):
            return replace(base, permission_pause=why)
        case _ as unreachable:
            assert_never(unreachable)


async def _measured(loop: MeasuredLoop, facts: TurnFacts) -> TurnFacts:
    """A prose stop's facts with what changed on disk and the evidence for it."""
    session = loop.session
    session.answer = facts.reply_text
    changes = await asyncio.to_thread(measure_changes, loop.snapshot, loop.ctx.root.root)
    paths = tuple(c.path for c in changes.changes)
    notebooks = touches_notebooks(paths)
    if notebooks:
        await _run_changed_notebooks(loop, changes)
    root = loop.ctx.root.root
    session.read_backs = ()
    unreadable: tuple[Unreadable, ...] = ()
    # read once when the task started (the router's state): not again at each prose stop
    state = loop.state
    requirements = state.requirements if state is not None else read_task(session.task,
                                                                          loop.config.mode)
    if not notebooks and only_non_code(paths):  # a read-back may be the evidence for prose
        read = await asyncio.to_thread(_read_back, root, changes, requirements,
                                       loop.config.file_read_max_bytes)
        session.read_backs = tuple(ReadBackEntry(p, why is None, session.steps_total)
                                   for p, why in read)
        unreadable = tuple(Unreadable(p, why) for p, why in read if why is not None)
    missing = await asyncio.to_thread(missing_files, root, requirements.must_exist)
    records = check_records(session)
    evidence = judge_evidence(
        records, session.last_mutation_seq, notebooks_changed=notebooks, runs=requirements.runs,
    )
    if notebooks:  # the changed cells that ran in the user's kernel count too
        changed = tuple(c.path for c in changes.changes if c.path.lower().endswith(".ipynb"))
        evidence = notebook_evidence(evidence, kernel_runs(session),
                                     edited_cells(session, changed), session.last_mutation_seq,
                                     session.last_change_seq)
    run = run_answer(records, session.last_mutation_seq, requirements, paths)
    read_back_ok = all(entry.ok for entry in session.read_backs)
    deleted = tuple(c.path for c in changes.changes if c.kind == "deleted")
    measured = Measured(paths, changes.verified_by, changes.complete and read_back_ok, missing,
                        deleted, unreadable)
    return replace(facts, measured=measured, evidence=evidence, run=run)


def _read_back(
    root: Path, report: ChangeReport, requirements: TaskRequirements, max_bytes: int,
) -> list[tuple[str, str | None]]:
    """Read every created or modified file back from disk: the evidence for non-code
    changes. A file reads back when it can be read; a deleted one has nothing to read, and
    counts only when the task asks to remove it (then: when it is gone). Each path comes with
    why it did not read back (None: it did); one that did not makes the change summary
    unconfirmed, so nothing is claimed as verified."""
    ws = Workspace(root)
    read: list[tuple[str, str | None]] = []
    for change in report.changes:
        if change.kind == "deleted":
            if requirements.removes(change.path):
                gone = not os.path.lexists(ws.root / change.path)
                read.append((change.path, None if gone else "still on disk"))
            continue
        read.append((change.path, read_back_refusal(ws, change.path, max_bytes)))
    return read


def read_back_refusal(ws: Workspace, relative: str, max_bytes: int) -> str | None:
    """Why the changed file ``relative`` does not read back, or None when it does: a regular
    file inside the workspace (a link is followed only to a target inside it), read to its
    end within ``max_bytes`` in constant memory. A FIFO, device or socket is refused before a
    byte is read (it could block or never end), so is a file over the budget."""
    try:
        path = ws.resolve(relative)
        with open_file(ws.root, path) as (fd, size):
            if size > max_bytes:
                raise FileTooLarge(size, max_bytes)
            digest_fd(fd, max_bytes)
    except WorkspaceError:
        return "a link that leads outside the workspace"
    except OSError as error:
        return refusal(error)
    return None


def missing_files(root: Path, paths: tuple[str, ...]) -> tuple[str, ...]:
    """The workspace files of ``paths`` (relative, or absolute inside ``root``) that are
    not on disk. A path outside the workspace is not judged."""
    base = root.resolve()
    missing: list[str] = []
    for name in paths:
        candidate = Path(name).expanduser()
        target = (candidate if candidate.is_absolute() else base / candidate).resolve()
        if not target.is_relative_to(base):
            continue
        if not target.is_file():
            missing.append(name)
    return tuple(missing)


async def _run_changed_notebooks(loop: MeasuredLoop, report: ChangeReport) -> None:
    """Execute changed notebooks unless one already ran after the last change: the end-of-task
    check ran, run_cells ran every cell of that notebook (its run may be the last change
    itself: what it wrote is its own outputs), or every cell the agent changed in it ran
    without error in the user's kernel (then it is not re-run from a fresh kernel). The run
    executes the agent's cells, so the permission mode decides it as a ``run_cells`` call."""
    session = loop.session
    last = session.last_mutation_seq
    if any(e.name == "notebook_check" and (last is None or e.seq > last)
           for e in session.tool_log):
        return
    whole = {e.notebook_run for e in session.tool_log
             if e.name != "notebook_check" and e.notebook_ran and not e.cells_run
             and (last is None or e.seq >= last)}
    changed = tuple(c.path for c in report.changes if c.path.lower().endswith(".ipynb"))
    whole |= covered_notebooks(kernel_runs(session), edited_cells(session, changed),
                               session.last_change_seq)
    for change in report.changes:
        if change.kind == "deleted" or not change.path.lower().endswith(".ipynb"):
            continue
        if change.path in whole:
            continue
        # it runs the agent's cells: asked as run_cells is (edits, ask), never in read-only
        denied = await permission_for("run_cells", None, json.dumps({"path": change.path}),
                                      loop.ctx, session, session.steps_total, loop.on_event)
        if denied is not None:  # not run, so no evidence: the task pauses, naming it
            if session.permission_needed is None and session.user_denied is not None:
                session.permission_needed = denied_reason(session.user_denied)
            continue
        label = f"notebook_check: {change.path}"
        loop.on_event(ToolStarted(step=session.steps_total, name="notebook_check", summary=label))
        run = await run_notebook_check(loop.ctx.root.root / change.path,
                                       loop.config.notebook_timeout_s, change.path,
                                       loop.ctx.process_scope, root=loop.ctx.root.root,
                                       max_bytes=loop.config.file_read_max_bytes,
                                       config=loop.config)
        session.log(ToolLogEntry(
            seq=session.next_seq(), step=session.steps_total, name="notebook_check", ok=run.ok,
            mutating=False, summary=f"run notebook {change.path}", result_head=run.detail,
            command=f"run notebook {change.path}", exit_code=0 if run.ok else 1,
            notebook_run=change.path, cell_error="" if run.ok else run.detail,
        ))
        loop.on_event(ToolFinished(step=session.steps_total, name="notebook_check", ok=run.ok,
                                   summary=label))


def _path_hint(arguments: str) -> str | None:
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        marker = '"path"'
        at = arguments.find(marker)
        if at < 0:
            return None
        rest = arguments[at + len(marker):].lstrip(" :").lstrip('"')
        return rest.split('"', 1)[0] or None
    return value.get("path") if isinstance(value, dict) else None
