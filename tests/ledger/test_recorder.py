"""The recorder: which events reach the ledger, redaction of every secret, failures contained."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import (
    AgentEvent,
    MemoryPressurePause,
    Notice,
    Pulse,
    StepStarted,
    TaskStarted,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    recorded_fields,
)
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.redaction import env_secrets
from mercury_nb.contract.vocabulary import NoticeKind
from mercury_nb.ledger.access import open_ledger
from mercury_nb.ledger.recorder import TaskRecorder
from mercury_nb.ledger.store import Ledger
from mercury_nb.ledger.writer import LedgerWriter
from mercury_nb.runs.events import RunEvent
from mercury_nb.testing import Turn, call


@pytest.mark.parametrize(
    "kind",
    ["notice", "provider-switch", "guard-round", "continuation", "verification", "compaction",
     "stall", "subagent"],
)
def test_a_notice_is_recorded_under_its_typed_kind(home: Path, tmp_path: Path,
                                                   kind: NoticeKind) -> None:
    handle = open_ledger(home)
    recorder = TaskRecorder(handle.writer, "t1", "task", MercuryConfig(workdir=tmp_path))
    sink = recorder.wrap(lambda event: None)
    sink(TaskStarted("t1", "task", "m", 75))
    sink(Notice("⚠ [compacted] Still working — text that says nothing about its kind", kind))
    handle.writer.flush()
    assert [e.kind for e in handle.ledger.events("t1")] == ["task-started", kind]


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        pytest.param({"OPENAI_API_KEY": "sk-abcdefgh12"}, ("sk-abcdefgh12",), id="api-key"),
        pytest.param({"GITHUB_TOKEN": "ghp_12345678"}, ("ghp_12345678",), id="token"),
        pytest.param({"MY_SECRET": "hunter2hunter2"}, ("hunter2hunter2",), id="secret"),
        pytest.param({"SOME_KEY": "short"}, (), id="too-short"),
        pytest.param({"PATH": "/usr/bin:/bin/and/more"}, (), id="not-a-key-name"),
    ],
)
def test_env_secrets(environ: dict[str, str], expected: tuple[str, ...]) -> None:
    assert env_secrets(environ) == expected


def test_tokens_are_coalesced_into_one_row_and_progress_is_batched(home: Path,
                                                                   tmp_path: Path) -> None:
    handle = open_ledger(home)
    writer = HeldWriter()  # the writes wait here, so the burst gathers whatever the clock
    config = MercuryConfig(workdir=tmp_path)
    recorder = TaskRecorder(writer, "t1", "task", config)  # type: ignore[arg-type]
    seen: list[AgentEvent] = []
    sink = recorder.wrap(seen.append)
    sink(TaskStarted("t1", "task", "m", 75))
    hot: list[AgentEvent] = [
        StepStarted(1, 75, "m"), TextDelta("tok"), TextDelta("tok"),
        ToolStarted(1, "run_command", "run_command: pytest", "pytest -q"),
        ToolFinished(1, "run_command", True, "run_command: pytest"), Notice("hello"),
    ]
    for event in hot:
        sink(event)
    assert seen[1:] == hot
    assert len(writer.writes) == 2  # the start, then one write for the whole burst
    for write in writer.writes:
        write(handle.ledger)
    events = handle.ledger.events("t1", progress=True)
    assert [e.kind for e in events] == ["task-started", "step-started", "text-delta",
                                        "tool-started", "tool-finished", "notice"]
    assert json.loads(events[2].data or "{}") == {"text": "toktok"}  # two tokens, one row
    assert '"command": "pytest -q"' in (events[3].data or "")


async def test_a_task_run_is_recorded_with_checkpoints(home: Path, tmp_path: Path,
                                                        scripted_model) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("write_file", path="a.txt", content="a\n"),)),
        Turn(tool_calls=(call("write_file", path="b.txt", content="b\n"),)),
        Turn(text="Wrote both."),
    ])
    config = MercuryConfig(workdir=tmp_path / "ws", max_steps=1, home=home)
    config.workdir.mkdir()
    handle = open_ledger(home)
    recorder = TaskRecorder(handle.writer, "t1", "write two files", config.with_changes(
        model=model.name))
    outcome = await run_new_session("write two files", config, model=model, task_id="t1",
                                    on_event=recorder.wrap(lambda event: None))
    handle.flush()
    record = handle.ledger.get("t1")
    assert record is not None
    assert (record.status, record.verdict, record.steps) == ("completed", "text-stop", 3)
    assert record.banner == outcome.banner
    assert [c["path"] for c in record.changes] == ["a.txt", "b.txt"]
    assert record.workspace == str(config.workdir.resolve())
    assert record.models == (model.name,)
    kinds = [(e.kind, e.verdict) for e in handle.ledger.events("t1")]
    assert kinds[0] == ("task-started", None) and kinds[-1] == ("task-finished", "text-stop")
    assert ("continuation", None) in kinds
    assert [v for k, v in kinds if k == "turn-ended"] == ["steps-exhausted", "steps-exhausted",
                                                    "text-stop"]
    checkpoint = handle.ledger.checkpoint("t1")
    assert checkpoint is not None
    assert checkpoint["steps_total"] == 3 and checkpoint["continuations"] == 2
    assert checkpoint["snapshot"].startswith("{")
    assert checkpoint["messages"][1] == {"role": "user", "content": "write two files"}


async def test_no_secret_ever_reaches_the_ledger_bytes(
    home: Path, tmp_path: Path, scripted_model, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_key = "sk-ledger-config-secret-0123456789"
    env_key = "anthropic-env-secret-abcdef987654"
    token = "plain-token-value-5550123"
    monkeypatch.setenv("ANTHROPIC_API_KEY", env_key)
    monkeypatch.setenv("DEPLOY_TOKEN", token)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "settings.env").write_text(f"ANTHROPIC={env_key}\n")  # in the start snapshot
    every = (config_key, env_key, token)
    model = scripted_model([
        Turn(tool_calls=(call("write_file", path="keys.txt", content="\n".join(every) + "\n"),)),
        Turn(tool_calls=(call("run_command", command=f"echo {token} {env_key}"),)),
        Turn(text=f"Stored {config_key} and {env_key}; the token is {token}."),
    ])
    config = MercuryConfig(permissions="auto", workdir=workspace, api_key=config_key, home=home,
                           max_steps=2,
                           max_auto_continuations=1)
    handle = open_ledger(home)
    task = f"save the keys {config_key} {env_key} {token} in keys.txt"
    recorder = TaskRecorder(handle.writer, "t1", task, config.with_changes(model=model.name))
    sink = recorder.wrap(lambda event: None)
    sink(Notice(f"⚠ a: bad key {config_key} — switching to b and continuing."))
    await run_new_session(task, config, model=model, task_id="t1", on_event=sink)
    handle.flush()
    record = handle.ledger.get("t1")
    assert record is not None and record.has_checkpoint
    assert "***" in record.task
    files = sorted(home.glob("ledger.sqlite3*"))
    assert {f.name for f in files} >= {"ledger.sqlite3", "ledger.sqlite3-wal"}
    raw = b"".join(f.read_bytes() for f in files)
    for secret in every:
        assert secret.encode() not in raw, secret
    # the checkpoint stays valid JSON with the secrets masked inside it
    checkpoint = handle.ledger.checkpoint("t1")
    assert checkpoint is not None
    assert any("***" in str(m.get("content")) for m in checkpoint["messages"])


class BrokenLedger(Ledger):
    def _write(self, action: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")


async def test_a_failing_ledger_never_breaks_the_task(home: Path, tmp_path: Path,
                                                      scripted_model) -> None:
    reports: list[str] = []
    writer = LedgerWriter(BrokenLedger(home / "ledger.sqlite3"), reports.append)
    model = scripted_model([
        Turn(tool_calls=(call("write_file", path="a.txt", content="a\n"),)),
        Turn(text="Done."),
    ])
    config = MercuryConfig(workdir=tmp_path, home=home)
    recorder = TaskRecorder(writer, "t1", "write a note in a.txt", config)
    outcome = await run_new_session("write a note in a.txt", config, model=model, task_id="t1",
                                    on_event=recorder.wrap(lambda event: None))
    writer.close()
    assert outcome.status == "completed"
    assert len(reports) == 1
    assert reports[0].startswith("mercury: the work ledger failed (OperationalError: disk I/O")
    writer.ledger.close()


def test_a_broken_checkpoint_is_contained(home: Path, tmp_path: Path) -> None:
    reports: list[str] = []
    handle = open_ledger(home)
    writer = LedgerWriter(handle.ledger, reports.append)
    recorder = TaskRecorder(writer, "t1", "task", MercuryConfig(workdir=tmp_path))
    seen: list[AgentEvent] = []
    sink = recorder.wrap(seen.append)

    def explode() -> dict[str, Any]:
        raise RuntimeError("no checkpoint today")

    ended = TurnEnded("t1", "text-stop", "FinishWith", explode)
    sink(ended)
    sink(Notice("still recorded? no: the recorder stopped after its failure"))
    writer.close()
    assert seen[0] is ended  # the view still got the event
    assert len(reports) == 1 and "no checkpoint today" in reports[0]
    assert handle.ledger.get("t1") is None


def test_abandon_records_a_run_that_raised(home: Path, tmp_path: Path) -> None:
    handle = open_ledger(home)
    recorder = TaskRecorder(handle.writer, "t1", "task", MercuryConfig(workdir=tmp_path))
    recorder.wrap(lambda event: None)(TaskStarted("t1", "task", "m", 75))
    recorder.abandon(RuntimeError("the view exploded"))
    handle.flush()
    record = handle.ledger.get("t1")
    assert record is not None
    assert record.status == "failed" and record.blocker == "RuntimeError: the view exploded"


async def test_checkpoint_snapshot_keeps_only_changed_files_text(
    home: Path, tmp_path: Path, scripted_model
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".env").write_text("AWS_SECRET_ACCESS_KEY=untouched-dotenv-value-42\n")
    (workspace / "notes.md").write_text("old notes line\n")
    model = scripted_model([
        Turn(tool_calls=(call("write_file", path="notes.md", content="new notes line\n"),)),
        Turn(text="Updated the notes."),
    ])
    config = MercuryConfig(workdir=workspace, home=home, model=model.name)
    handle = open_ledger(home)
    recorder = TaskRecorder(handle.writer, "t1", "update notes", config)
    outcome = await run_new_session("update notes", config, model=model, task_id="t1",
                                    on_event=recorder.wrap(lambda event: None))
    handle.flush()
    assert [c.path for c in outcome.changes] == ["notes.md"]
    raw = b"".join(f.read_bytes() for f in sorted(home.glob("ledger.sqlite3*")))
    assert b"untouched-dotenv-value-42" not in raw
    checkpoint = handle.ledger.checkpoint("t1")
    assert checkpoint is not None
    stored = json.loads(checkpoint["snapshot"])["files"]
    assert stored[".env"]["text"] is None and stored[".env"]["size"] > 0
    assert stored["notes.md"]["text"] == "old notes line\n"  # the change summary's "before"


async def test_a_non_utf8_file_name_never_stops_a_checkpoint(
    home: Path, tmp_path: Path, scripted_model
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / os.fsdecode(b"bad\xffname.txt")).write_text("odd name\n")
    model = scripted_model([
        Turn(tool_calls=(call("list_dir", path="."),)),
        Turn(tool_calls=(call("write_file", path="ok.txt", content="fine\n"),)),
        Turn(text="Listed and wrote."),
    ])
    config = MercuryConfig(workdir=workspace, home=home, model=model.name)
    handle = open_ledger(home)
    reports: list[str] = []
    handle.writer.report = reports.append
    task = "List the workspace, then write a note in ok.txt"
    recorder = TaskRecorder(handle.writer, "t1", task, config)
    outcome = await run_new_session(task, config, model=model, task_id="t1",
                                    on_event=recorder.wrap(lambda event: None))
    handle.flush()
    assert reports == []
    assert outcome.status == "completed"
    listing = next(m for m in model.requests[-1].messages if m.get("role") == "tool")["content"]
    assert "bad\\xffname.txt" in listing
    checkpoint = handle.ledger.checkpoint("t1")
    assert checkpoint is not None and checkpoint["steps_total"] == 3
    record = handle.ledger.get("t1")
    assert record is not None and record.status == "completed"


async def test_the_answer_and_provider_ledger_are_recorded_for_any_reader(
    home: Path, tmp_path: Path, scripted_model
) -> None:
    """A task finished in one process shows its answer and per-provider ledger to a reader
    in another (the panel's detail), not only to the process that ran it."""
    from mercury_nb.runs.watching import outcome_of
    from mercury_nb.testing import HttpError

    scripted_model([Turn(fault=HttpError(401, message="Incorrect API key provided"))],
                   register="rec-a")
    scripted_model([Turn(text="2 + 2 is 4.")], register="rec-b")
    config = MercuryConfig(workdir=tmp_path, home=home, model="scripted/rec-a",
                           fallbacks=("scripted/rec-b",), mode="chat", retry_attempts=0)
    handle = open_ledger(home)
    recorder = TaskRecorder(handle.writer, "t1", "What is 2+2?", config)
    outcome = await run_new_session("What is 2+2?", config, task_id="t1",
                                    on_event=recorder.wrap(lambda event: None))
    handle.flush()
    assert outcome.answer == "2 + 2 is 4." and "scripted/rec-a" in outcome.providers
    reader = Ledger(home / "ledger.sqlite3")  # a fresh connection, as another process has
    try:
        record = reader.get("t1")
    finally:
        reader.close()
    assert record is not None
    assert record.answer == "2 + 2 is 4."
    assert record.providers == dict(outcome.providers)
    kept = outcome_of(record)
    assert kept is not None
    assert (kept["answer"], kept["providers"]) == (outcome.answer, dict(outcome.providers))


class HeldWriter:
    """A writer that keeps the submitted writes, to run them by hand."""

    def __init__(self) -> None:
        self.writes: list[Any] = []

    def submit(self, write: Any) -> None:
        self.writes.append(write)

    def fail(self, error: BaseException) -> None:
        raise AssertionError(error)


class EventsLedger:
    def __init__(self) -> None:
        self.added: list[list[tuple[str, Any, Any]]] = []

    def add_events(self, header: Any, events: list[tuple[str, Any, Any]],
                   step: Any = None) -> None:
        self.added.append(events)


def test_closing_a_batch_lets_its_waiting_write_go_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A progress batch's write waits on the writer thread for the burst to gather; a turn
    or the task's end closes the batch, and the write goes then, not at the deadline."""
    import threading

    from mercury_nb.ledger import recorder as recorder_module

    monkeypatch.setattr(recorder_module, "PROGRESS_COALESCE_S", 3600.0)
    writer = HeldWriter()
    recorder = TaskRecorder(writer, "t1", "build it", MercuryConfig(workdir=tmp_path))  # type: ignore[arg-type]
    recorder.record(Notice("working"))
    ledger = EventsLedger()
    write = threading.Thread(target=writer.writes[0], args=(ledger,), daemon=True)
    write.start()
    write.join(timeout=0.5)  # the batch is open: its write waits for the burst to gather
    assert write.is_alive() and ledger.added == [], "the open batch's write did not wait"
    recorder.record(TaskStarted("t1", "build it", "m", 5))  # closes the open batch
    write.join(timeout=10)
    assert not write.is_alive(), "the closed batch's write still waits for its deadline"
    assert [[kind for kind, _, _ in batch] for batch in ledger.added] == [["notice"]]


async def test_an_ending_no_continue_cures_is_recorded_as_not_resumable(
    home: Path, tmp_path: Path, scripted_model
) -> None:
    # prose to every forced tool call: the model takes no tools
    model = scripted_model([Turn(text="Here is hello.py: print('hi')")] * 3)
    config = MercuryConfig(workdir=tmp_path / "ws", home=home)
    config.workdir.mkdir()
    handle = open_ledger(home)
    task = "Create hello.py that prints hi, and run it."
    recorder = TaskRecorder(handle.writer, "nt1", task, config.with_changes(model=model.name))
    outcome = await run_new_session(task, config, model=model, task_id="nt1",
                                    on_event=recorder.wrap(lambda event: None))
    handle.flush()
    record = handle.ledger.get("nt1")
    assert (outcome.status, outcome.resumable) == ("failed", False)
    assert record is not None and (record.status, record.resumable) == ("failed", False)


async def test_read_back_evidence_is_stored_with_its_kind(home: Path, tmp_path: Path,
                                                          scripted_model) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("create_file", path="NOTES.md", content="# Notes\n"),)),
        Turn(text="Wrote the notes."),
    ])
    config = MercuryConfig(workdir=tmp_path, home=home, model=model.name)
    task = "Write a summary of the project in NOTES.md"
    handle = open_ledger(home)
    recorder = TaskRecorder(handle.writer, "t1", task, config)
    outcome = await run_new_session(task, config, model=model, task_id="t1",
                                    on_event=recorder.wrap(lambda event: None))
    handle.flush()
    assert "✓ Verified: change summary and read-back of NOTES.md ✓" in outcome.banner
    record = handle.ledger.get("t1")
    assert record is not None
    assert [(e["kind"], e["path"], e["exit_code"]) for e in record.evidence] == [
        ("read-back", "NOTES.md", 0)]


@pytest.mark.parametrize(
    "event",
    [
        StepStarted(2, 9, "m"),
        ToolStarted(2, "run_command", "run_command: ls", "ls"),
        ToolFinished(2, "run_command", False, "run_command: ls"),
        Notice("⚠ switching to b", "provider-switch"),
        Pulse("Still working — the model · 6 s silent", "the model", 6),
        MemoryPressurePause("memory", "the kernel is using 5000 MB of memory", 900, 4000,
                            5000.0, 100),
    ],
    ids=lambda event: event.kind,
)
def test_an_event_is_recorded_as_itself(home: Path, tmp_path: Path,
                                        event: AgentEvent) -> None:
    handle = open_ledger(home)
    recorder = TaskRecorder(handle.writer, "t1", "task", MercuryConfig(workdir=tmp_path))
    sink = recorder.wrap(lambda seen: None)
    sink(TaskStarted("t1", "task", "m", 75))
    sink(event)
    handle.writer.flush()
    *_, last = [RunEvent.from_record(row) for row in handle.ledger.events("t1", progress=True)]
    assert (last.kind, last.data) == (event.kind, recorded_fields(event))


def test_streamed_text_is_recorded_redacted_for_watchers_and_dropped_at_the_end(
        home: Path, tmp_path: Path) -> None:
    handle = open_ledger(home)
    writer = HeldWriter()
    config = MercuryConfig(workdir=tmp_path, stream_record_ms=10)
    recorder = TaskRecorder(writer, "t1", "task", config,  # type: ignore[arg-type]
                            environ={"SOME_API_KEY": "envsecret-123456"})
    sink = recorder.wrap(lambda event: None)
    sink(TaskStarted("t1", "task", "m", 75))
    sink(StepStarted(1, 75, "m"))
    for piece in ("The key is sk-abcd", "efgh12345 and envsecret", "-123456 here. "):
        sink(TextDelta(piece))
    sink(TextDelta("Trailing"))
    sink(ToolStarted(1, "read_file", "read_file: a.txt"))
    for write in writer.writes:
        write(handle.ledger)
    events = handle.ledger.events("t1", progress=True)
    texts = [json.loads(e.data or "{}")["text"] for e in events if e.kind == "text-delta"]
    assert "".join(texts) == "The key is sk-*** and *** here. Trailing"
    assert [e.kind for e in events][-1] == "tool-started"  # the held word went before it
    recorder.abort("stopped")
    for write in writer.writes[len(writer.writes) - 1:]:
        write(handle.ledger)
    kinds = [e.kind for e in handle.ledger.events("t1", progress=True)]
    assert "text-delta" not in kinds and kinds[-1] == "task-finished"
