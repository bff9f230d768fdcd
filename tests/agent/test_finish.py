"""The outcome's evidence list: every command and notebook run by kind, one read-back entry
per file a read-back completion names, so each ``✓ Verified`` line has its entry."""

from __future__ import annotations

from typing import Any

import pytest

from mercury_nb.agent import finish
from mercury_nb.agent.finish import blocker_of, build_outcome, command_evidence
from mercury_nb.agent.session import ReadBackEntry, TaskSession, ToolLogEntry
from mercury_nb.contract import banners
from mercury_nb.contract.banners import banner_text
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    BlockedPause,
    Blocker,
    DeclinedPause,
    Ending,
    FilesMissingPause,
    Paused,
    VerificationFailedPause,
    VerifiedCompletion,
    WorkNotStartedPause,
)
from mercury_nb.contract.gate.verification import CheckRecord, ReadBack, Verified
from mercury_nb.contract.outcome import CommandEvidence
from mercury_nb.workspace.changes import ChangeReport


def session(*entries: ToolLogEntry, read_backs: tuple[ReadBackEntry, ...] = ()) -> TaskSession:
    task = TaskSession.start("task", MercuryConfig())
    task.tool_log = list(entries)
    task.read_backs = read_backs
    return task


def entry(seq: int, name: str, command: str | None, exit_code: int | None = 0,
          mutating: bool = False) -> ToolLogEntry:
    return ToolLogEntry(seq=seq, step=seq, name=name, ok=exit_code == 0, mutating=mutating,
                        summary=command or name, result_head="", command=command,
                        exit_code=exit_code)


WRITE = entry(1, "create_file", None, mutating=True)
RUN_HELLO = entry(2, "run_command", "python hello.py", mutating=True)  # may write: a mutation
NOTEBOOK = entry(2, "notebook_check", "run notebook a.ipynb")
READ_BACKS = (ReadBackEntry("NOTES.md", True, 1), ReadBackEntry("old.md", True, 1))


@pytest.mark.parametrize(
    ("tool_log", "ending"),
    [
        pytest.param((WRITE, RUN_HELLO),
                     VerifiedCompletion(Verified(CheckRecord("python hello.py", 0, 2))),
                     id="requested-run-that-is-the-last-change"),
        pytest.param((WRITE, NOTEBOOK),
                     VerifiedCompletion(Verified(
                         CheckRecord("run notebook a.ipynb", 0, 2, kind="notebook"))),
                     id="notebook"),
        pytest.param((WRITE,), VerifiedCompletion(ReadBack(("NOTES.md", "old.md"))),
                     id="read-back-of-two"),
    ],
)
def test_every_verified_line_has_its_entry(tool_log: tuple[ToolLogEntry, ...],
                                           ending: Ending) -> None:
    evidence = command_evidence(session(*tool_log, read_backs=READ_BACKS), ending)
    [line] = [line for line in banner_text(ending, []).splitlines()
              if line.startswith("✓ Verified")]
    match ending:
        case VerifiedCompletion(evidence=Verified(check=check)):
            assert line == f"✓ Verified: {check.command} ✓"
            assert [(e.command, e.kind, e.exit_code, e.after_last_change) for e in evidence
                    if e.command == check.command] == [(check.command, check.kind, 0, True)]
        case VerifiedCompletion(evidence=ReadBack(paths=paths)):
            assert [(e.path, e.exit_code) for e in evidence if e.kind == "read-back"] == [
                (p, 0) for p in paths]
            assert all(p in line for p in paths)


def test_read_back_entries_appear_only_for_a_read_back_completion() -> None:
    paused = VerificationFailedPause(None, stale=False)
    evidence = command_evidence(session(WRITE, read_backs=READ_BACKS), paused)
    assert evidence == []


def test_a_file_that_did_not_read_back_is_recorded_as_failed() -> None:
    ending = VerifiedCompletion(ReadBack(("NOTES.md",)))
    [item] = command_evidence(session(WRITE, read_backs=(ReadBackEntry("NOTES.md", False, 1),)),
                              ending)
    assert (item.kind, item.path, item.exit_code) == ("read-back", "NOTES.md", 1)


def test_a_run_before_the_last_change_stays_before_it() -> None:
    evidence = command_evidence(session(RUN_HELLO, entry(3, "write_file", None, mutating=True)))
    assert [e.after_last_change for e in evidence] == [False]


def test_rows_recorded_before_kinds_load_as_commands() -> None:
    old = CommandEvidence.model_validate({"command": "pytest", "exit_code": 0, "step": 2})
    assert (old.kind, old.path) == ("command", None)


def test_the_blocker_of_a_files_missing_pause_names_each_file() -> None:
    ending = FilesMissingPause(("calc.py", "test_calc.py"))
    assert blocker_of(ending, 120) == "calc.py was not created; test_calc.py was not created"


@pytest.mark.parametrize(
    ("ending", "line"),
    [
        pytest.param(WorkNotStartedPause(Blocker("edit_file", "denied: a.py")),
                     "What blocked it: edit_file: denied: a.py", id="work-not-started"),
        pytest.param(Paused("the guard stopped it", Blocker("run_command", "exit 2")),
                     "What blocked it: run_command: exit 2", id="paused-with-blocker"),
        pytest.param(BlockedPause("the API is down"), "What blocked it: the API is down",
                     id="blocked"),
        pytest.param(DeclinedPause("it is already done"),
                     "What it said: no change is needed — it is already done", id="declined"),
    ],
)
def test_the_blocker_clause_is_built_once_for_banner_and_blocker(
    monkeypatch: pytest.MonkeyPatch, ending: Ending, line: str,
) -> None:
    calls: list[str] = []
    for name in ("blocker_clause", "blocked_clause"):
        real = getattr(banners, name)

        def counted(*args: object, _real: Any = real, _name: str = name) -> str:
            calls.append(_name)
            return str(_real(*args))

        for module in (banners, finish):  # wherever a builder of the outcome may reach it
            monkeypatch.setattr(module, name, counted, raising=False)
    outcome = build_outcome(session(), ending, ChangeReport([], "snapshot"))
    # the one clause, built once (a blocker's clause cuts its result with blocked_clause)
    built = ["blocker_clause"] if isinstance(ending, WorkNotStartedPause | Paused) else []
    assert calls == [*built, "blocked_clause"]
    assert line in outcome.banner.splitlines()
    assert outcome.blocker is not None and line.split(": ", 1)[1].endswith(
        outcome.blocker.split(": ", 1)[-1])
