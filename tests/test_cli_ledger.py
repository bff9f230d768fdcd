"""The CLI's ledger commands: kill -9 mid-task then continue, tasks/show, refusals, damage."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mercury_nb import cli
from mercury_nb.contract.recovery.resumption import PAUSED_BY, REMAINS_DEFAULT
from mercury_nb.ledger.access import close_all
from mercury_nb.ledger.texts import INTERRUPTED_BLOCKER, PAUSED_DUPLICATE
from mercury_nb.testing import Stall, Turn, call
from mercury_nb.transport.protocol import ModelRequest
from tests.runs import crossproc
from tests.runs.crossproc import wait_until

SECRET = "sk-cli-ledger-secret-9876543210"


def cli_env(home: Path) -> dict[str, str]:
    return crossproc.cli_env(home, SECRET)


def run_cli(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return crossproc.run_cli(*args, cwd=cwd, home=home, api_key=SECRET)


def ledger_rows(home: Path) -> list[tuple[str, str, int]]:
    """(id, status, has a checkpoint) of every task, read by a separate connection."""
    path = home / "ledger.sqlite3"
    if not path.exists():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute(
            "SELECT id, status, EXISTS (SELECT 1 FROM checkpoints c WHERE c.task_id = tasks.id) "
            "FROM tasks"
        ).fetchall()
    except sqlite3.OperationalError:  # the schema is not there yet
        return []
    finally:
        conn.close()


def test_a_task_killed_with_sigkill_pauses_and_continue_completes_it(
    tmp_path: Path, loopback_server
) -> None:
    home = tmp_path / "home"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    stalled = threading.Event()

    def stall(request: ModelRequest) -> Turn:
        stalled.set()
        return Turn(text="never arrives", fault=Stall(seconds=600))

    server = loopback_server([
        Turn(tool_calls=(call("create_file", path="notes.txt", content="first line\n"),)),
        stall,  # the second budget's request: the process is killed while it waits
        Turn(text="Wrote notes.txt."),
    ])
    process = subprocess.Popen(
        [sys.executable, "-m", "mercury_nb", "run", "write the notes", "--model", "openai/m",
         "--api-base", server.url, "--max-steps", "1", "--json"],
        cwd=workspace, env=cli_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert stalled.wait(60), "the CLI never reached the stalled request"
        wait_until(lambda: [(s, c) for _, s, c in ledger_rows(home)] == [("running", 1)],
                   "the ledger to show the task running with a checkpoint")
    finally:
        os.kill(process.pid, signal.SIGKILL)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL, stderr
    assert (workspace / "notes.txt").read_text() == "first line\n"

    conn = sqlite3.connect(home / "ledger.sqlite3")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()

    listed = run_cli("tasks", "--json", cwd=workspace, home=home)
    assert listed.returncode == 0, listed.stderr
    [task] = json.loads(listed.stdout)
    assert (task["status"], task["blocker"]) == ("paused", INTERRUPTED_BLOCKER)
    assert task["has_checkpoint"] and task["task"] == "write the notes"
    assert "interrupted when their process stopped" in listed.stderr

    again = run_cli("run", "write the notes", "--model", "openai/m", "--api-base", server.url,
                    cwd=workspace, home=home)
    assert again.returncode == 3, again.stderr
    assert again.stdout.startswith(PAUSED_DUPLICATE)
    assert len(server.requests) == 2  # nothing started twice

    resumed = run_cli("continue", "--json", "--message", "keep it short", cwd=workspace,
                      home=home)
    assert resumed.returncode == 0, resumed.stderr
    outcome = json.loads(resumed.stdout)
    assert (outcome["status"], outcome["task_id"]) == ("completed", task["id"])
    assert [c["path"] for c in outcome["changes"]] == ["notes.txt"]
    last = server.requests[-1]["messages"]
    # the resume turn says what is done and what stopped it, then the user's words
    assert last[-1] == {"role": "user", "content": "keep it short"}
    assert last[-2]["role"] == "user" and last[-2]["content"].startswith("[SYSTEM: RESUME]")
    assert 'The task remains: "write the notes"' in last[-2]["content"]
    assert "notes.txt (created)" in last[-2]["content"]
    assert PAUSED_BY.format(blocker=INTERRUPTED_BLOCKER + ".") in last[-2]["content"]
    assert REMAINS_DEFAULT in last[-2]["content"]
    assert any("create_file" in json.dumps(m) for m in last)  # the restored conversation

    shown = run_cli("show", task["id"], "--json", cwd=workspace, home=home)
    assert shown.returncode == 0, shown.stderr
    detail = json.loads(shown.stdout)
    assert detail["status"] == "completed"
    kinds = [e["kind"] for e in detail["events"]]
    assert kinds[:2] == ["task-started", "turn-ended"]
    assert {"recovery", "resume", "task-finished"} <= set(kinds)
    raw = b"".join(p.read_bytes() for p in home.glob("ledger.sqlite3*"))
    assert SECRET.encode() not in raw


# --- in-process: tasks, show, refusals -------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in list(os.environ):
        if name.startswith("MERCURY_"):
            monkeypatch.delenv(name)
    folder = tmp_path / "home"
    monkeypatch.setenv("MERCURY_HOME", str(folder))
    monkeypatch.chdir(tmp_path)
    yield folder
    close_all()


def paused_run(tmp_path: Path, scripted_model, capsys: pytest.CaptureFixture[str]) -> str:
    """Run a task that pauses; return its id."""
    scripted_model([Turn(tool_calls=(call("write_file", path="a.txt", content="a\n"),))],
                   register="cli-ledger")
    code = cli.main(["run", "make a.txt and b.txt", "--model", "scripted/cli-ledger",
                     "--max-steps", "1", "--json"])
    assert code == 3
    return str(json.loads(capsys.readouterr().out)["task_id"])


def test_tasks_show_and_refusals(home: Path, tmp_path: Path, scripted_model,
                                 monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MERCURY_MAX_AUTO_CONTINUATIONS", "0")
    task_id = paused_run(tmp_path, scripted_model, capsys)

    assert cli.main(["tasks"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["id", "status", "age", "task", "banner"]
    assert table[1].split()[:2] == [task_id, "paused"]

    assert cli.main(["show", task_id[:6]]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"task {task_id} · paused\n  make a.txt and b.txt\n")

    assert cli.main(["run", "make a.txt and b.txt", "--json"]) == 3
    refused = json.loads(capsys.readouterr().out)
    assert (refused["task_id"], refused["status"]) == (task_id, "paused")
    assert refused["banner"].startswith(PAUSED_DUPLICATE)
    assert [c["path"] for c in refused["changes"]] == ["a.txt"]

    assert cli.main(["show", "ffffffffffff"]) == 2
    assert "There is no task 'ffffffffffff'" in capsys.readouterr().err
    other = tmp_path / "other"
    other.mkdir()
    assert cli.main(["continue", "--workdir", str(other)]) == 2
    assert "There is no paused task to continue in" in capsys.readouterr().err


def test_continue_by_id_with_new_flags_completes(home: Path, tmp_path: Path, scripted_model,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MERCURY_MAX_AUTO_CONTINUATIONS", "0")
    task_id = paused_run(tmp_path, scripted_model, capsys)
    scripted_model([Turn(tool_calls=(call("write_file", path="b.txt", content="b\n"),)),
                    Turn(text="Both written.")], register="cli-ledger-2")
    code = cli.main(["continue", task_id, "--model", "scripted/cli-ledger-2", "--max-steps",
                     "4"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.startswith("✓ Task complete")
    assert "a.txt" in captured.out and "b.txt" in captured.out
    assert cli.main(["continue", task_id]) == 2
    assert "is completed" in capsys.readouterr().err


def test_a_damaged_ledger_is_reported_and_replaced(home: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    home.mkdir()
    (home / "ledger.sqlite3").write_bytes(b"garbage" * 1000)
    assert cli.main(["tasks", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == []
    assert "was damaged; it was moved aside as ledger.sqlite3.corrupt-" in captured.err
    assert len(list(home.glob("ledger.sqlite3.corrupt-*"))) == 1


@pytest.mark.parametrize("args", [("tasks",), ("tasks", "--json"), ("show", "abc"),
                                  ("stop", "abc")],
                         ids=["tasks", "tasks-json", "show", "stop"])
def test_a_ledger_that_cannot_be_opened_is_reported_with_exit_1(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    home = tmp_path / "home-is-a-file"
    home.write_text("not a folder\n")
    result = run_cli(*args, cwd=tmp_path, home=home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "could not be opened" in result.stderr
    assert "No tasks" not in result.stdout + result.stderr
    assert result.stdout == ""


def test_an_empty_mercury_home_is_an_error(tmp_path: Path) -> None:
    env = {**cli_env(tmp_path), "MERCURY_HOME": ""}
    result = subprocess.run([sys.executable, "-m", "mercury_nb", "tasks"], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "MERCURY_HOME is set but empty" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_show_names_a_tasks_sub_agents_and_a_sub_agents_parent(
        home: Path, tmp_path: Path, scripted_model, capsys: pytest.CaptureFixture[str]) -> None:
    scripted_model([
        Turn(tool_calls=(call("delegate_task", task="Which files are here?"),)),
        Turn(text="None."),
        Turn(text="The helper found no files."),
    ], register="cli-delegate")
    assert cli.main(["run", "What does a helper find here?", "--model",
                     "scripted/cli-delegate", "--json"]) == 0
    parent = str(json.loads(capsys.readouterr().out)["task_id"])
    assert cli.main(["show", parent, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["subagents"] == [f"{parent}.1"]
    assert cli.main(["show", f"{parent}.1"]) == 0
    assert f"sub-agent of: {parent}\n" in capsys.readouterr().out
