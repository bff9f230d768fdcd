"""Undo of a finished task, for every front end: plan from the ledger and disk, apply, record.

:func:`undo` reads everything it needs from the ledger (the task, its sub-agents, the commands
they ran) and from the content store under ``home`` (the states kept at the task's end), so it
works in any process after a restart. The undo is recorded as a task of its own (``undo
<id>``) whose kept states are what the undo overwrote: undoing it puts the task's end state
back. A notebook open in JupyterLab is undone there, cell by cell (:mod:`.undo_live`); an
undo that changes nothing is not recorded (there is nothing to put back).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import FileChange
from mercury_nb.contract.undo_plan import (
    Action,
    FileStates,
    LiveRestore,
    Ran,
    UndoAsked,
    UndoPlan,
    plan_file,
    plan_undo,
    refuse_undo,
)
from mercury_nb.contract.vocabulary import KERNEL_RUN_TOOLS
from mercury_nb.ledger.records import TaskHeader, TaskRecord
from mercury_nb.ledger.store import Ledger
from mercury_nb.runs.launch import ledger_for
from mercury_nb.runs.lookup import Refusal, find_task
from mercury_nb.runs.undo_live import LiveUndone, live_edits_for, undo_live
from mercury_nb.tools.notebook_live import LiveEdits
from mercury_nb.tools.open_notebooks import is_open
from mercury_nb.workspace.undo_apply import Applied, apply_plan
from mercury_nb.workspace.undo_store import (
    KeptFile,
    TaskStates,
    current_hash,
    get_blob,
    load_states,
    save_states,
)

NO_LEDGER = "no ledger: nothing can be undone"


@dataclass(frozen=True)
class UndoReport:
    """What an undo did. ``undo_id`` is the undo's own task id (undo it to put things back);
    None when it changed nothing, so it was not recorded."""

    task_id: str
    undo_id: str | None
    restored: list[str] = field(default_factory=list)
    left: list[tuple[str, str]] = field(default_factory=list)
    not_undoable: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.left

    def text(self) -> str:
        """The report in lines for people (the CLI, the magic)."""
        named = "undo" if self.undo_id is None else f"undo {self.undo_id}"
        lines = [f"{named} of task {self.task_id}: {len(self.restored)} file(s) restored"]
        lines += [f"  restored: {path}" for path in self.restored]
        lines += [f"  {why}" for _, why in self.left]
        if self.not_undoable:
            lines.append("not undoable:")
            lines += [f"  {what}" for what in self.not_undoable]
        if self.undo_id is not None:
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
    family = [record, *_descendants(ledger, record.id)]
    states = _merged(config.home, family)
    busy = ledger.find(workspace=record.workspace, status="running", limit=1)
    refused = refuse_undo(UndoAsked(  # dead processes' rows were paused above
        record.id, record.status == "running", busy[0].id if busy else None,
        record.workspace, states is not None, bool(record.changes), str(config.home)))
    if refused is not None:
        return Refusal(refused.message, record, kind=refused.kind)
    states = states or TaskStates(record.workspace, {})
    root = Path(states.root)
    kept = {p: f for p, f in states.files.items() if paths is None or p in paths}
    edits = live_edits_for(config)
    files = tuple(FileStates(p, f.before, f.end, current_hash(root, p), f.unkept,
                             live=_live(config, edits, root, p, f)) for p, f in kept.items())
    plan = plan_undo(files, _ran(ledger, family))
    undo_id = uuid.uuid4().hex[:12]  # named in the live requests, so the panel knows them
    lived, fallback = _apply_live(plan, files, root, config, edits, undo_id)
    applied = apply_plan(UndoPlan(plan.actions + fallback, ()), root, config.home)
    _merge(applied, lived)
    if not applied.states:  # nothing changed: no task of its own (nothing to put back)
        return UndoReport(record.id, None, sorted(applied.restored), applied.left,
                          list(plan.not_undoable))
    save_states(config.home, undo_id, TaskStates(str(root), applied.states))
    report = UndoReport(record.id, undo_id, sorted(applied.restored), applied.left,
                        list(plan.not_undoable))
    _record(ledger, record, undo_id, report, applied.states)
    return report


def _live(config: MercuryConfig, edits: LiveEdits | None, root: Path, path: str,
          kept: KeptFile) -> bool:
    """A notebook open in JupyterLab whose content at the task's both ends is kept."""
    return (path.endswith(".ipynb") and kept.before is not None and kept.end is not None
            and is_open(edits, config, (root / path).resolve())
            and get_blob(config.home, kept.before) is not None
            and get_blob(config.home, kept.end) is not None)


def _apply_live(plan: UndoPlan, files: tuple[FileStates, ...], root: Path,
                config: MercuryConfig, edits: LiveEdits | None, undo_id: str
                ) -> tuple[dict[str, LiveUndone], tuple[Action, ...]]:
    """Each open notebook undone live; the disk actions of those that did not answer."""
    lived: dict[str, LiveUndone] = {}
    fallback: list[Action] = []
    by_path = {f.path: f for f in files}
    for action in plan.live:
        done = None if edits is None else undo_live(action, root, config, edits, undo_id)
        if done is None:
            again = plan_file(replace(by_path[action.path], live=False))
            if again is not None and not isinstance(again, LiveRestore):
                fallback.append(again)
            continue
        lived[action.path] = done
    return lived, tuple(fallback)


def _merge(applied: Applied, lived: dict[str, LiveUndone]) -> None:
    """The live undos into the disk undo's tally."""
    for path, done in lived.items():
        if done.changed:
            applied.restored.append(path)
        if done.state is not None:
            applied.states[path] = done.state
        applied.left.extend(done.left)


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
    """The commands the task and its sub-agents ran, and how often they ran kernel code; a
    call the permission mode denied (its ``permission-answered`` deny follows its start) did
    not run and is not counted."""
    commands: list[str] = []
    kernel = 0
    for member in family:
        ran: list[tuple[str, str | None]] = []  # (tool, command) of each call started
        for event in ledger.events(member.id, progress=True):
            if event.kind not in ("tool-started", "permission-answered") or not event.data:
                continue
            data = json.loads(event.data)
            if event.kind == "tool-started":
                command = data.get("command")
                ran.append((str(data.get("name")), str(command) if command else None))
            elif data.get("answer") == "deny" and ran and ran[-1][0] == data.get("tool"):
                ran.pop()
        commands.extend(c for name, c in ran if name == "run_command" and c)
        kernel += sum(1 for name, _ in ran if name in KERNEL_RUN_TOOLS)
    return Ran(tuple(commands), kernel)


def _record(ledger: Ledger, record: TaskRecord, undo_id: str, report: UndoReport,
            states: dict[str, KeptFile]) -> None:
    """The undo as a finished task of its own in the ledger, its files as its changes."""
    header = TaskHeader(id=undo_id, task=f"undo {record.id}",
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
