"""runs.request_stop and the per-process stop poller, in one process (the cross-process
tests are in test_stop_across_processes.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from crossproc import ended, pid_in, wait_for

from mercury_nb import runs
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.reader import LedgerReader
from mercury_nb.ledger.records import TaskHeader
from mercury_nb.ledger.store import Ledger
from mercury_nb.runs import stopping
from mercury_nb.testing import Turn, call
from mercury_nb.testing.orphans import alive


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        pytest.param(None, "unknown", id="unknown"),
        pytest.param("completed", "not-running", id="completed"),
        pytest.param("paused", "not-running", id="paused"),
    ],
)
def test_stopping_a_task_that_is_not_running_says_so(home: Path, status: str | None,
                                                     kind: str) -> None:
    if status is not None:
        ledger = Ledger(home / "ledger.sqlite3")
        header = TaskHeader("abcdef123456", "t", "/tmp", ("m",))
        ledger.start_task(header)
        ledger.finish_task(header, status=status, verdict=None, banner=None, blocker=None,
                           changes="[]", evidence="[]", steps=0)
        ledger.close()
    reply = runs.request_stop("abcdef12", home=home)
    assert reply.kind == kind
    assert ("is not running" if status else "There is no task") in reply.message


async def test_a_request_from_another_connection_stops_the_task_through_the_poller(
    home: Path, tmp_path: Path, scripted_model
) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("run_command", command="echo $$ > shell.pid; sleep 300"),)),
    ])
    config = MercuryConfig(permissions="auto", workdir=tmp_path, home=home, model=model.name)
    run = await runs.start("wait a while", config, model=model)
    assert isinstance(run, runs.Run)
    await wait_for(lambda: (tmp_path / "shell.pid").exists(), "the command to start")
    other = Ledger(home / "ledger.sqlite3")  # like another process: its own connection
    try:
        await wait_for(lambda: other.get(run.task_id) is not None
                       and other.get(run.task_id).status == "running", "the running row")
        assert other.request_stop(run.task_id)
        outcome = await ended(run.task, "the stop request to be honoured")
        await wait_for(lambda: other.get(run.task_id).status == "aborted", "the aborted row")
    finally:
        other.close()
    assert (outcome.status, outcome.verdict) == ("aborted", "aborted")
    shell = pid_in(tmp_path / "shell.pid")
    assert shell is not None
    await wait_for(lambda: not alive(shell), "the stopped command's shell to be gone")


def test_the_poller_reads_no_table_while_nothing_is_committed(home: Path,
                                                              monkeypatch) -> None:
    reads: list[object] = []
    original = LedgerReader.stop_requested
    monkeypatch.setattr(LedgerReader, "stop_requested",
                        lambda self, ids: reads.append(ids) or original(self, ids))
    Ledger(home / "ledger.sqlite3").close()
    monkeypatch.setattr(stopping, "local_ids", lambda at: ["t1"] if at == home.resolve() else [])
    reader = LedgerReader(home)
    poller = stopping.StopPoller(home.resolve(), reader=reader)
    try:
        poller.poll_once()  # the first look reads once
        for _ in range(50):
            poller.poll_once()
        assert len(reads) == 1
        ledger = Ledger(home / "ledger.sqlite3")
        ledger.start_task(TaskHeader("t2", "t", "/tmp", ("m",)))  # a commit elsewhere
        ledger.close()
        poller.poll_once()
        assert len(reads) == 2
    finally:
        reader.close()
