"""kill -9 in the middle of a long turn loses at most the step in flight: every finished step
is checkpointed (batched with the progress events), and ``continue`` resumes from the last
one with a conversation that never holds a tool call without its result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from mercury_nb.testing import Turn, call
from mercury_nb.testing.loopback_server import LoopbackServer
from mercury_nb.testing.orphans import alive
from tests.runs.crossproc import LONG_COMMAND, cli_env, pid_in, query, run_cli, wait_until

FINISHED_STEPS = 6
"""Steps of the one long turn that finish before the kill (each writes one note)."""


def notes(count: int) -> list[Turn]:
    return [Turn(tool_calls=(call("write_file", path=f"note{i}.txt", content=f"note {i}\n"),))
            for i in range(1, count + 1)]


def tool_started(home: Path, task_id: str) -> list[dict[str, Any]]:
    rows = query(home, "SELECT data FROM events WHERE task_id = ? AND kind = 'tool-started'",
                 (task_id,))
    return [json.loads(str(row[0])) for row in rows if row[0]]


def unanswered_calls(messages: list[dict[str, Any]]) -> list[str]:
    """Ids of tool calls in ``messages`` that no tool message answers."""
    answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    return [c["id"] for m in messages for c in m.get("tool_calls") or ()
            if c["id"] not in answered]


def written_notes(messages: list[dict[str, Any]]) -> list[str]:
    return [json.loads(c["function"]["arguments"])["path"] for m in messages
            for c in m.get("tool_calls") or () if c["function"]["name"] == "write_file"]


def test_kill_9_mid_turn_loses_at_most_the_step_in_flight(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    script = [*notes(FINISHED_STEPS),
              Turn(tool_calls=(call("run_command", command=LONG_COMMAND),)),  # in flight
              Turn(tool_calls=(call("finish", status="done", summary="Wrote the notes."),))]
    with LoopbackServer(script) as server:
        process = subprocess.Popen(
            [sys.executable, "-m", "mercury_nb", "run", "write the notes, then wait",
             "--permissions", "auto",
             "--model", "openai/m", "--api-base", server.url, "--json", "--chat"],
            cwd=workspace, env=cli_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        pids: list[int | None] = []
        try:
            wait_until(lambda: pid_in(workspace / "child.pid") is not None
                       and pid_in(workspace / "shell.pid") is not None, "the long command")
            pids = [pid_in(workspace / "shell.pid"), pid_in(workspace / "child.pid")]
            task_id = str(query(home, "SELECT id FROM tasks")[0][0])
            # the in-flight step's tool start is recorded: every batch before it was written
            wait_until(lambda: any(e.get("name") == "run_command"
                                   for e in tool_started(home, task_id)),
                       "the in-flight step's progress in the ledger")
            process.send_signal(signal.SIGKILL)
            process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate(timeout=30)
            for pid in pids:  # a kill -9 of the agent leaves its commands (documented)
                if pid is not None and alive(pid):
                    os.kill(pid, signal.SIGKILL)
        assert sorted(p.name for p in workspace.glob("note*.txt")) == [
            f"note{i}.txt" for i in range(1, FINISHED_STEPS + 1)]
        assert len(server.requests) == FINISHED_STEPS + 1

        resumed = run_cli("continue", task_id, "--model", "openai/m", "--api-base",
                          server.url, "--json", cwd=workspace, home=home)
    first = server.requests[FINISHED_STEPS + 1]["messages"]  # the resumed conversation
    assert written_notes(first) == [f"note{i}.txt" for i in range(1, FINISHED_STEPS + 1)]
    assert unanswered_calls(first) == []  # the step in flight is gone whole
    assert "run_command" not in json.dumps([m.get("tool_calls") for m in first])
    outcome = json.loads(resumed.stdout)  # it ends honestly (no check ran: paused)
    assert (outcome["task_id"], outcome["steps"]) == (task_id, FINISHED_STEPS + 1), outcome
