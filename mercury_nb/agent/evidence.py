"""Measures what a turn did on disk and judges its evidence, for the pure turn router."""

from __future__ import annotations

import asyncio
import json
import os
import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from mercury_nb.agent.events import ToolFinished, ToolStarted
from mercury_nb.agent.session import ReadBackEntry, TaskSession, ToolLogEntry
from mercury_nb.contract.endings import Blocker, WindowTooSmall
from mercury_nb.contract.escalation.doom_loop import DoomLoop
from mercury_nb.contract.escalation.provider_policy import DOOM_LOOP_KIND
from mercury_nb.contract.gate.file_kinds import only_non_code
from mercury_nb.contract.gate.task_reading import read_task
from mercury_nb.contract.gate.task_requirements import TaskRequirements
from mercury_nb.contract.gate.verification import CheckRecord, judge_evidence, touches_notebooks
from mercury_nb.contract.redaction import displayable, known_secrets, redact
from mercury_nb.contract.turns.final_reply import FinishCall, answer_of
from mercury_nb.contract.turns.router_state import STALL_KIND, Measured, ProviderTrouble, TurnFacts
from mercury_nb.contract.turns.stream_assembly import StepReply
from mercury_nb.contract.turns.turn_verdict import TurnVerdict
from mercury_nb.transport.context_window import reported_tool_support
from mercury_nb.transport.protocol import ChatModel, ModelRequest, ProviderError
from mercury_nb.workspace.changes import ChangeReport, measure_changes
from mercury_nb.workspace.notebook_check import execute_notebook

if TYPE_CHECKING:
    from mercury_nb.agent.events import EventSink
    from mercury_nb.agent.stall_watch import AttemptStalled
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.tools.base import ToolContext
    from mercury_nb.workspace.snapshot import Snapshot


class MeasuredLoop(Protocol):
    """What gathering a turn's facts uses of the loop: the session, the start snapshot, the
    workspace (through the tool context), the config and the sink."""

    session: TaskSession
    snapshot: Snapshot
    ctx: ToolContext

    @property
    def on_event(self) -> EventSink: ...

    @property
    def model(self) -> ChatModel: ...

    @property
    def config(self) -> MercuryConfig: ...


@dataclass(frozen=True)
class TurnReport:
    """What the loop saw when a turn ended (before any measuring)."""

    verdict: TurnVerdict
    reply: StepReply | None
    trouble: ProviderTrouble | None = None
    doom: DoomLoop | None = None
    pressure: str | None = None
    """The memory governor's pause text: the task pauses before the next request."""
    window_too_small: WindowTooSmall | None = None
    """The window cannot hold what every request carries: the task fails, nothing sent."""
    reply_cap: int | None = None
    """``max_tokens`` of the turn's last request."""
    forced: bool = False
    """The turn's first step was sent with ``tool_choice`` required (set by the loop)."""
    called_tools: bool = False
    """The model made at least one tool call during the turn (set by the loop)."""
    finish: FinishCall | None = None
    """The model ended the turn with a ``finish`` call (its answer is the final reply)."""

    @classmethod
    def ended(
        cls, verdict: TurnVerdict, reply: StepReply, provider: str, after_output: bool = False,
        finish: FinishCall | None = None,
    ) -> TurnReport:
        """``after_output``: a tool call of this turn completed, so an interrupted attempt
        continues the turn; otherwise the same request is retried cleanly (the cut text is
        dropped, never part of an answer). ``finish``: the step's ``finish`` call."""
        trouble = None
        if verdict is TurnVerdict.INTERRUPTED:
            message = reply.error or "the stream ended without a finish reason"
            trouble = ProviderTrouble(
                provider=provider, message=message, kind="interrupted",
                streamed_output=after_output,
            )
        return cls(verdict, reply, trouble, finish=finish)

    @classmethod
    def provider_failed(
        cls, error: ProviderError, request: ModelRequest | None = None,
        tool_names: tuple[str, ...] | None = None, after_output: bool = False,
    ) -> TurnReport:
        """The request failed before any output. ``after_output``: a tool already completed
        in this turn, so the turn is partial and the next attempt continues it."""
        # a provider's error body may echo a key: masked before any notice, ledger or banner
        message = redact(displayable(error.message), known_secrets(None, os.environ))
        trouble = ProviderTrouble(
            provider=error.provider, message=message, status=error.status,
            kind=error.kind, retry_after_s=error.retry_after_s, streamed_output=after_output,
            tool_choice=request.tool_choice if request is not None else "auto",
            tool_names=tool_names,
        )
        return cls(TurnVerdict.INTERRUPTED, None, trouble)

    @classmethod
    def stalled(
        cls, text: str, reply: StepReply, provider: str, request: ModelRequest,
        tool_names: tuple[str, ...] | None, after_output: bool,
    ) -> TurnReport:
        """The stall watchdog cut the request: an interrupted attempt whose reason is the
        stall report. ``after_output``: text was kept or a tool completed in this turn."""
        trouble = ProviderTrouble(
            provider=provider, message=text, kind=STALL_KIND, streamed_output=after_output,
            tool_choice=request.tool_choice, tool_names=tool_names,
        )
        return cls(TurnVerdict.INTERRUPTED, reply, trouble)

    @classmethod
    def paused_for_pressure(cls, why: str) -> TurnReport:
        """Memory or context pressure stayed after compaction: pause for ``why``."""
        return cls(TurnVerdict.INTERRUPTED, None, pressure=why)

    @classmethod
    def cannot_fit(cls, ending: WindowTooSmall) -> TurnReport:
        """The window cannot hold the request's fixed part: end with ``ending``."""
        return cls(TurnVerdict.INTERRUPTED, None, window_too_small=ending)

    @classmethod
    def looped(cls, loop: DoomLoop, reply: StepReply, provider: str) -> TurnReport:
        """The doom-loop detector stopped the attempt; the work done so far is kept."""
        trouble = ProviderTrouble(provider=provider, message=loop.description, kind=DOOM_LOOP_KIND)
        return cls(TurnVerdict.INTERRUPTED, reply, trouble, loop)


def stalled_turn(
    session: TaskSession, stalled: AttemptStalled, provider: str, request: ModelRequest,
    tool_names: tuple[str, ...] | None, did_work: bool,
) -> TurnReport:
    """The report of a request the stall watchdog cut: the attempt is interrupted, named by
    the stall. What had streamed of the cut reply is dropped (never part of an answer); the
    turn continues only when a tool call of it completed (``did_work``)."""
    text = stalled.stall.text
    reply = stalled.assembly.reply(error=text, step=session.steps_total)
    return TurnReport.stalled(text, reply, provider, request, tool_names, did_work)


def check_records(session: TaskSession) -> list[CheckRecord]:
    return [
        CheckRecord(
            command=e.command or e.summary, exit_code=e.exit_code, seq=e.seq,
            kind="notebook" if e.name == "notebook_check" else "command", timed_out=e.timed_out,
        )
        for e in session.tool_log
        if e.command is not None or e.name == "notebook_check"
    ]


async def gather_turn_facts(loop: MeasuredLoop, report: TurnReport) -> TurnFacts:
    session = loop.session
    reply = report.reply
    finish = report.finish
    text = answer_of(finish) if finish is not None else reply.text if reply else ""
    failed = session.last_failed_mutation
    base = TurnFacts(
        verdict=report.verdict, reply_text=text, finish=finish, trouble=report.trouble,
        jitter=random.random(),
        mutations_in_task=session.successful_mutations_since(0),
        last_failed_mutation=Blocker(failed.name, failed.result_head) if failed else None,
        doom=report.doom, pressure_pause=report.pressure,
        window_too_small=report.window_too_small, reply_cap=report.reply_cap,
        forced=report.forced, called_tools=report.called_tools,
        tools_reported=await reported_tool_support(loop.model),  # asked once per server
    )
    if report.verdict is TurnVerdict.TRUNCATED and reply is not None and reply.tool_calls:
        return replace(base, trouble=None, cut_write=True,
                       cut_write_path=_path_hint(reply.tool_calls[0].arguments))
    if report.verdict is not TurnVerdict.TEXT_STOP:
        return base
    session.answer = text
    changes = await asyncio.to_thread(measure_changes, loop.snapshot, loop.ctx.root.root)
    paths = tuple(c.path for c in changes.changes)
    notebooks = touches_notebooks(paths)
    if notebooks:
        await _run_changed_notebooks(loop, changes)
    root = loop.ctx.root.root
    session.read_backs = ()
    requirements = read_task(session.task, loop.config.mode)
    if not notebooks and only_non_code(paths):  # a read-back may be the evidence for prose
        read = await asyncio.to_thread(_read_back, root, changes, requirements)
        session.read_backs = tuple(ReadBackEntry(p, ok, session.steps_total) for p, ok in read)
    missing = await asyncio.to_thread(missing_files, root, requirements.must_exist)
    evidence = judge_evidence(
        check_records(session), session.last_mutation_seq, notebooks_changed=notebooks,
        runs=requirements.runs,
    )
    read_back_ok = all(entry.ok for entry in session.read_backs)
    deleted = tuple(c.path for c in changes.changes if c.kind == "deleted")
    measured = Measured(paths, changes.verified_by, changes.complete and read_back_ok, missing,
                        deleted)
    return replace(base, trouble=None, measured=measured, evidence=evidence)


def _read_back(
    root: Path, report: ChangeReport, requirements: TaskRequirements
) -> list[tuple[str, bool]]:
    """Read every created or modified file back from disk: the evidence for non-code
    changes. A file reads back when it can be read; a deleted one has nothing to read, and
    counts only when the task asks to remove it (then: when it is gone). One that does not
    read back makes the change summary unconfirmed, so nothing is claimed as verified."""
    read: list[tuple[str, bool]] = []
    for change in report.changes:
        path = root / change.path
        if change.kind == "deleted":
            if requirements.removes(change.path):
                read.append((change.path, not path.exists()))
            continue
        try:
            path.read_bytes()
        except OSError:
            read.append((change.path, False))
        else:
            read.append((change.path, True))
    return read


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
    """Execute changed notebooks unless one already ran after the last change."""
    session = loop.session
    last = session.last_mutation_seq
    ran_after = any(e.name == "notebook_check" and (last is None or e.seq > last)
                    for e in session.tool_log)
    if ran_after:
        return
    for change in report.changes:
        if change.kind == "deleted" or not change.path.lower().endswith(".ipynb"):
            continue
        label = f"notebook_check: {change.path}"
        loop.on_event(ToolStarted(step=session.steps_total, name="notebook_check", summary=label))
        run = await asyncio.to_thread(
            execute_notebook, loop.ctx.root.root / change.path,
            loop.config.notebook_timeout_s, change.path,
        )
        session.log(ToolLogEntry(
            seq=session.next_seq(), step=session.steps_total, name="notebook_check", ok=run.ok,
            mutating=False, summary=f"run notebook {change.path}", result_head=run.detail,
            command=f"run notebook {change.path}", exit_code=0 if run.ok else 1,
        ))
        loop.on_event(ToolFinished(step=session.steps_total, name="notebook_check", ok=run.ok,
                                   summary=label))


def _path_hint(arguments: str) -> str | None:
    try:
        value = json.loads(arguments)
    except ValueError:
        marker = '"path"'
        at = arguments.find(marker)
        if at < 0:
            return None
        rest = arguments[at + len(marker):].lstrip(" :").lstrip('"')
        return rest.split('"', 1)[0] or None
    return value.get("path") if isinstance(value, dict) else None
