"""Records a task's progress in the ledger: an event-sink wrapper over the writer thread.

Recorded: ``TaskStarted`` (the row is running), ``TurnEnded`` (a turn event and the latest
checkpoint), ``StepEnded`` (the latest checkpoint, no event row), ``TaskFinished`` (the final
row), and every other event as itself, for watchers in other processes: its ``kind`` and its
fields (:func:`~mercury_nb.agent.events.recorded_fields`, as JSON), whatever its class;
streamed text (``TextDelta``) is coalesced, redacted as a whole and written as
``text-delta`` rows for live watchers (:mod:`mercury_nb.ledger.streamed`), never a row per
token. Progress events are batched: one transaction takes every progress event queued since
the last one and the checkpoint of the newest step that finished meanwhile, within
``PROGRESS_COALESCE_S`` of it (a kill -9 loses the step in
flight, and a step that finished less than that before the kill). The sink itself only takes
the checkpoint (it must see the loop's state as it is now); turning it into the rows of
what changed since the last one, redacted (:mod:`~mercury_nb.ledger.checkpoint_json`), and
the SQLite writes happen on the ledger's
writer thread (:mod:`mercury_nb.ledger.writer`), so a slow disk or a busy ledger never holds
up the kernel's loop. A ledger failure is reported once and the task goes on without it.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mercury_nb.agent.events import (
    AgentEvent,
    AgentEventKind,
    EventSink,
    StepEnded,
    TaskFinished,
    TaskStarted,
    TextDelta,
    TurnEnded,
    recorded_fields,
)
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.redaction import displayable, redact
from mercury_nb.ledger.checkpoint_json import CheckpointJson
from mercury_nb.ledger.records import StepCheckpoint, TaskHeader
from mercury_nb.ledger.secrets import ledger_secrets, redact_data
from mercury_nb.ledger.store import Ledger
from mercury_nb.ledger.streamed import Row, StreamedRows, merge_text
from mercury_nb.ledger.writer import LedgerWriter

PROGRESS_COALESCE_S = 0.1
"""How long a batch of progress events stays open before its write (watchers see events
within this plus their own poll; a fast loop writes one transaction per interval)."""


def stored_text(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` as the ledger keeps it: displayable, its secrets masked (a task's text is
    looked up in this form: ``paused_with_text``)."""
    return redact(displayable(text), secrets)


def stored_task(task: str, config: MercuryConfig) -> str:
    """A task's text as its row keeps it (what a lookup by text compares)."""
    return stored_text(task, ledger_secrets(config))


def task_header(task_id: str, task: str, config: MercuryConfig, *, parent: str | None = None,
                secrets: tuple[str, ...] | None = None, shown: str | None = None) -> TaskHeader:
    """The row's identity as every write of the task carries it (texts redacted with
    ``secrets``, default the ledger's; ``shown``: the task's text already so, taken as is)."""
    found = ledger_secrets(config) if secrets is None else secrets

    def clean(text: str) -> str:
        return stored_text(text, found)

    return TaskHeader(id=task_id, task=clean(task) if shown is None else shown,
                      workspace=clean(str(Path(config.workdir).resolve())),
                      models=tuple(clean(name) for name in config.model_chain), parent=parent)


@dataclass
class _Batch:
    """Progress events queued for one write, and the newest finished step's checkpoint."""

    events: list[Row] = field(default_factory=list)
    checkpoint: dict[str, Any] | None = None
    """JSON-ready data the loop no longer changes (serialized at the write)."""
    snapshot: str | None = None
    """The newest start snapshot (JSON) not sent yet, if a step in the batch took one."""


class TaskRecorder:
    """Records one task (new or resumed) through ``writer``; :meth:`wrap` makes the sink."""

    def __init__(self, writer: LedgerWriter, task_id: str, task: str, config: MercuryConfig,
                 *, resumed: bool = False, environ: dict[str, str] | None = None,
                 parent: str | None = None, header: TaskHeader | None = None) -> None:
        self.writer = writer
        self.config = config
        self.resumed = resumed
        self.secrets = ledger_secrets(config, environ)
        self._checkpoints = CheckpointJson(self.secrets)
        self._streamed = StreamedRows(self.secrets, config.stream_record_chars, self._clean)
        self.header = header if header is not None else task_header(
            task_id, task, config, parent=parent, secrets=self.secrets)
        """``header`` when the caller already built it (the door, writing the row)."""
        self.finished = False
        self._snapshot_sent: str | None = None
        self._broken = False
        self._progress: _Batch | None = None
        """The open batch of progress events (its write is queued), or None."""
        self._progress_lock = threading.Lock()
        self._closed = threading.Event()
        """Set when the open batch is closed: its write (waiting on the writer thread for
        the burst to gather) goes at once, so a turn's or the end's write never waits."""

    def _clean(self, text: str) -> str:
        return redact(displayable(text), self.secrets)

    def wrap(self, inner: EventSink) -> EventSink:
        """A sink that records, then passes every event on to ``inner``."""

        def sink(event: AgentEvent) -> None:
            self.record(event)
            inner(event)

        return sink

    def record(self, event: AgentEvent) -> None:
        """Queue the write for ``event``; never raises."""
        if self._broken:
            return
        try:
            self._record(event)
        except Exception as error:
            self._broken = True
            self.writer.fail(error)

    def _record(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta):  # most events of a step (streamed pieces): first
            with self._progress_lock:  # pieces join: one row per interval, not per token
                merge_text(self._open_batch(self.config.stream_record_ms / 1e3).events, event.text)
            return
        header = self.header
        if isinstance(event, TaskStarted | TurnEnded | TaskFinished):
            self._close_batch()  # keeps the order of events in the ledger
        match event:
            case TaskStarted():
                resumed = self.resumed
                self.writer.submit(lambda ledger: ledger.start_task(header, resumed=resumed))
            case TurnEnded(verdict=verdict, decision=decision, checkpoint=take):
                data = take()  # taken now, as data the loop no longer changes
                snapshot = data.pop("snapshot", None)
                # sent again only when it changed (a file changed: its "before" text joins)
                fresh = None if snapshot == self._snapshot_sent else snapshot
                self._snapshot_sent = snapshot
                self.writer.submit(
                    lambda ledger: self._save_turn(ledger, verdict, decision, data, fresh))
            case StepEnded(changed=changed, checkpoint=take):
                data = take(changed or self._snapshot_sent is None)
                snapshot = data.pop("snapshot", None)
                fresh = None if snapshot in (None, self._snapshot_sent) else snapshot
                self._snapshot_sent = snapshot or self._snapshot_sent
                with self._progress_lock:
                    batch = self._open_batch()
                    batch.checkpoint = data
                    batch.snapshot = fresh or batch.snapshot
            case TaskFinished(outcome=outcome):
                if self.finished:  # already recorded aborted: its process was ending
                    return
                self.finished = True
                self.writer.submit(lambda ledger: self._finish(ledger, outcome))
            case _:
                data = recorded_fields(event)
                text = data.get("text")
                self._queue_progress(event.kind, text if isinstance(text, str) else None, data)

    def _queue_progress(self, kind: AgentEventKind, text: str | None, data: dict[str, Any]
                        ) -> None:
        """Queue a progress event in the open batch (a burst of events is one transaction)."""
        with self._progress_lock:
            batch = self._open_batch()
            batch.events.append((kind, text, json.dumps(data, default=str) if data else None))

    def _open_batch(self, gather_s: float | None = None) -> _Batch:
        """The open batch, or a new one (gathering for ``gather_s``, default
        ``PROGRESS_COALESCE_S``), whose write is queued now: it takes whatever the batch
        holds by then. Called under the progress lock."""
        batch = self._progress
        if batch is None:
            batch = self._progress = _Batch()
            closed = self._closed = threading.Event()
            due = time.monotonic() + (PROGRESS_COALESCE_S if gather_s is None else gather_s)
            self.writer.submit(lambda ledger: self._write_progress(ledger, batch, due, closed))
        return batch

    def _close_batch(self) -> None:
        """Later progress goes into a new batch, written after what is queued now."""
        with self._progress_lock:
            self._progress = None
            self._closed.set()

    def _write_progress(self, ledger: Ledger, batch: _Batch, due: float,
                        closed: threading.Event) -> None:
        wait = due - time.monotonic()
        if wait > 0 and self._progress is batch:  # still open: let the burst gather
            closed.wait(wait)
        with self._progress_lock:
            if self._progress is batch:
                self._progress = None
            events, data, snapshot = list(batch.events), batch.checkpoint, batch.snapshot
        step = None
        if data is not None:
            clean_snapshot = None
            if snapshot is not None:
                clean_snapshot = json.dumps(redact_data(json.loads(snapshot), self.secrets))
            rows = self._checkpoints.rows(data)
            step = StepCheckpoint(rows, clean_snapshot, int(data.get("steps_total", 0)))
        ledger.add_events(self.header, self._streamed.rows(events), step)
        if step is not None:
            self._checkpoints.wrote(rows)  # committed: the next step's rows start here

    def _save_turn(self, ledger: Ledger, verdict: str | None, decision: str,
                   data: dict[str, Any], snapshot: str | None) -> None:
        held = self._streamed.flush()  # the turn's text is whole: what was held back goes
        if held:
            ledger.add_events(self.header, held)
        clean_snapshot = None
        if snapshot is not None:
            clean_snapshot = json.dumps(redact_data(json.loads(snapshot), self.secrets))
        # ASCII JSON: text that is not valid UTF-8 (a file name) never breaks the write
        rows = self._checkpoints.rows(data)
        ledger.save_turn(self.header, verdict=verdict, decision=decision, checkpoint=rows,
                         snapshot=clean_snapshot, steps=int(data.get("steps_total", 0)))
        self._checkpoints.wrote(rows)

    def _finish(self, ledger: Ledger, outcome: TaskOutcome) -> None:
        def listed(items: list[Any]) -> str:
            return json.dumps(redact_data([item.model_dump(mode="json") for item in items],
                                          self.secrets))

        ledger.finish_task(
            self.header,
            status=outcome.status,
            verdict=outcome.verdict,
            banner=self._once(outcome, outcome.banner),
            blocker=self._once(outcome, outcome.blocker) if outcome.blocker else None,
            changes=listed(outcome.changes),
            evidence=listed(outcome.evidence),
            steps=outcome.steps,
            usage=json.dumps({name: used.model_dump() for name, used in outcome.usage.items()}),
            answer=self._once(outcome, outcome.answer) if outcome.answer is not None else None,
            providers=json.dumps({name: self._clean(error)
                                  for name, error in outcome.providers.items()}),
            resumable=outcome.resumable,
            cause=json.dumps(redact_data(outcome.cause, self.secrets)),
        )
        ledger.prune(self.config.ledger_keep_finished, self.config.ledger_keep_days)

    def _once(self, outcome: TaskOutcome, text: str) -> str:
        """``text`` of ``outcome`` for the ledger, redacted once: the outcome's builder
        redacted it with the secrets it knew, so only the ledger's others are masked here; a
        text it did not redact (a copy's changed banner) is redacted in full."""
        left = outcome.secrets_left(text, self.secrets)
        if left is None:
            return self._clean(text)
        return redact(text, left) if left else text

    def abort(self, banner: str) -> bool:
        """The task can no longer finish by itself (its process or kernel is ending): record
        it ``aborted`` with ``banner`` now. False when it had already finished."""
        if self.finished:
            return False
        self.finished = True
        self._closed.set()  # the open batch goes now; no lock taken (a signal may call this)
        header, text = self.header, self._clean(banner)
        self.writer.submit(
            lambda ledger: ledger.finish_task(
                header, status="aborted", verdict="aborted", banner=text, blocker=None,
                changes="[]", evidence="[]", steps=None,
            )
        )
        return True

    def abandon(self, error: BaseException) -> None:
        """The run raised before it finished: record it as failed (or aborted if cancelled)."""
        if self.finished:
            return
        self.finished = True
        self._close_batch()
        import asyncio

        status = "aborted" if isinstance(error, asyncio.CancelledError) else "failed"
        text = self._clean(f"{type(error).__name__}: {error}")[:500]
        header = self.header
        self.writer.submit(
            lambda ledger: ledger.finish_task(
                header, status=status, verdict=None, banner=text, blocker=text,
                changes="[]", evidence="[]", steps=None,
            )
        )
