"""Undo of a finished task, for every front end: plan from the ledger and disk, apply, record.

:func:`undo` reads everything it needs from the ledger (the task, its sub-agents, the commands
they ran) and from the content store under ``home`` (the states kept at the task's end), so it
works in any process after a restart. The undo is recorded as a task of its own (``undo
<id>``) whose kept states are what the undo overwrote: undoing it puts the task's end state
back.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import FileChange
from mercury_nb.contract.undo_plan import FileStates, Ran, plan_undo
from mercury_nb.ledger.records import TaskHeader, TaskRecord
from mercury_nb.ledger.store import Ledger
from mercury_nb.runs.launch import ledger_for
from mercury_nb.runs.lookup import Refusal, find_task
from mercury_nb.workspace.undo_apply import apply_plan
from mercury_nb.workspace.undo_store import (
    KeptFile,
    TaskStates,
    current_hash,
    load_states,
    save_states,
)

STILL_RUNNING = "task {task_id} is still running: stop it before undoing it"
NOT_KEPT = ("task {task_id} kept no record for undo (it ran before undo was recorded, or its "
            "record under {home} is gone)")
NO_LEDGER = "no ledger: nothing can be undone"
BUSY = "task {other} is running in {workspace}: undo {task_id} after it ends"


@dataclass(frozen=True)
class UndoReport:
    """What an undo did. ``undo_id`` is the undo's own task id (undo it to put things back)."""

    task_id: str
    undo_id: str
    restored: list[str] = field(default_factory=list)
    left: list[tuple[str, str]] = field(default_factory=list)
    not_undoable: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.left

    def text(self) -> str:
        """The report in lines for people (the CLI, the magic)."""
        lines = [f"undo {self.undo_id} of task {self.task_id}: "
                 f"{len(self.restored)} file(s) restored"]
        lines += [f"  restored: {path}" for path in self.restored]
        lines += [f"  {why}" for _, why in self.left]
        if self.not_undoable:
            lines.append("not undoable:")
            lines += [f"  {what}" for what in self.not_undoable]
        lines.append(f"to put them back: undo {self.undo_id}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "undo_id": self.undo_id, "restored": self.restored,
                "left": [{"path": p, "why": w} for p, w in self.left],
                "not_undoable": self.not_undoable}


def undo(task_id: str, config: MercuryConfig, *, paths: tuple[str, ...] | None = None
         ) -> UndoReport | Refusal:
    """Undo the task with this id (or unique prefix); ``paths``: only these files (a per-file
    revert). Refuses a running task, one while another task runs in its workspace, and one
    that kept no record."""
    handle = ledger_for(config)
    if handle is None:
        return Refusal(NO_LEDGER, kind="no-ledger")
    handle.flush()
    ledger = handle.ledger
    record = find_task(ledger, task_id)
    if isinstance(record, Refusal):
        return record
    if record.status == "running":
        return Refusal(STILL_RUNNING.format(task_id=record.id), record, kind="cannot-continue")
    busy = ledger.find(workspace=record.workspace, status="running", limit=1)
    if busy:  # its writes and the undo's would cross (dead processes' rows were paused above)
        return Refusal(BUSY.format(other=busy[0].id, workspace=record.workspace,
                                   task_id=record.id), record, kind="workspace-busy")
    family = [record, *_descendants(ledger, record.id)]
    states = _merged(config.home, family)
    if states is None:
        if record.changes:
            return Refusal(NOT_KEPT.format(task_id=record.id, home=config.home), record,
                           kind="cannot-continue")
        states = TaskStates(record.workspace, {})
    root = Path(states.root)
    kept = {p: f for p, f in states.files.items() if paths is None or p in paths}
    files = tuple(FileStates(p, f.before, f.end, current_hash(root, p), f.unkept)
                  for p, f in kept.items())
    plan = plan_undo(files, _ran(ledger, family))
    applied = apply_plan(plan, root, config.home)
    undo_id = uuid.uuid4().hex[:12]
    save_states(config.home, undo_id, TaskStates(str(root), applied.states))
    report = UndoReport(record.id, undo_id, applied.restored, applied.left,
                        list(plan.not_undoable))
    _record(ledger, record, report, applied.states)
    return report


def _descendants(ledger: Ledger, task_id: str) -> list[TaskRecord]:
    """The sub-agents of ``task_id``, theirs too (parent id links them)."""
    found: list[TaskRecord] = []
    queue = [task_id]
    while queue:
        for child in ledger.children(queue.pop()):
            if child.id not in {r.id for r in found}:
                found.append(child)
                queue.append(child.id)
    return found


def _merged(home: Path, family: list[TaskRecord]) -> TaskStates | None:
    """The task's kept states, with its sub-agents' files it did not record itself."""
    root: str | None = None
    files: dict[str, KeptFile] = {}
    for member in family:
        states = load_states(home, member.id)
        if states is None:
            continue
        root = root or states.root
        for path, kept in states.files.items():
            files.setdefault(path, kept)
    return None if root is None else TaskStates(root, files)


def _ran(ledger: Ledger, family: list[TaskRecord]) -> Ran:
    """The commands the task and its sub-agents ran, and how often they ran kernel code."""
    commands: list[str] = []
    kernel = 0
    for member in family:
        for event in ledger.events(member.id, progress=True):
            if event.kind != "tool-started" or not event.data:
                continue
            data = json.loads(event.data)
            if data.get("name") == "run_command" and data.get("command"):
                commands.append(str(data["command"]))
            elif data.get("name") == "run_in_kernel":
                kernel += 1
    return Ran(tuple(commands), kernel)


def _record(ledger: Ledger, record: TaskRecord, report: UndoReport,
            states: dict[str, KeptFile]) -> None:
    """The undo as a finished task of its own in the ledger, its files as its changes."""
    header = TaskHeader(id=report.undo_id, task=f"undo {record.id}",
                        workspace=record.workspace, models=())
    changes = [FileChange(path=p, added=0, removed=0, measured=False, preview="restored by undo",
                          kind="deleted" if s.end is None else
                          "created" if s.before is None else "modified").model_dump(mode="json")
               for p, s in sorted(states.items())]
    left = "; ".join(why for _, why in report.left)
    banner = (f"undid {record.id}: {len(report.restored)} file(s) restored"
              + (f"; {left}" if left else ""))
    ledger.start_task(header)
    ledger.finish_task(header, status="completed", verdict=None, banner=banner,
                       blocker=left or None, changes=json.dumps(changes), evidence="[]",
                       steps=0, answer=json.dumps(report.to_json()))
