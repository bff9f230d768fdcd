"""SIGTERM, SIGHUP and SIGINT end a CLI task like Stop: the JSON outcome says ``aborted``, exit
code 1, the ledger row is final and no process of its commands is left; a second signal, or a
shutdown that outlasts its grace, still ends the process at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from crossproc import LONG_COMMAND, cli_env, pid_in, query, running_task, wait_until

from mercury_nb.testing import Turn, call
from mercury_nb.testing.orphans import alive, orphan_writer, read_pid

SIGNALS = [pytest.param(signal.SIGTERM, id="sigterm"), pytest.param(signal.SIGHUP, id="sighup"),
           pytest.param(signal.SIGINT, id="sigint")]


def start_cli(workspace: Path, home: Path, url: str, *flags: str) -> subprocess.Popen[str]:
    # a busy machine may need seconds to kill the tree: these tests are about the Stop path,
    # the bound is tested below
    env = {**cli_env(home), "MERCURY_SHUTDOWN_GRACE_S": "120"}
    return subprocess.Popen(
        [sys.executable, "-m", "mercury_nb", "run", "--permissions", "auto",
         "write notes, then wait", "--model",
         "openai/m", "--api-base", url, *flags],
        cwd=workspace, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)


@pytest.mark.parametrize("signum", SIGNALS)
def test_a_signal_ends_the_cli_task_like_stop(tmp_path: Path, loopback_server,
                                              signum: signal.Signals) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    orphan_pid = tmp_path / "orphan.pid"
    server = loopback_server([
        Turn(tool_calls=(call("write_file", path="notes.txt", content="kept\n"),
                         call("run_command",
                              command=f"{orphan_writer(orphan_pid)}; {LONG_COMMAND}"),)),
    ])
    process = start_cli(workspace, home, server.url, "--json")
    try:
        wait_until(lambda: pid_in(workspace / "shell.pid") is not None
                   and running_task(home) is not None, "the long command to run")
        task_id = running_task(home)
        pids = [read_pid(orphan_pid), pid_in(workspace / "shell.pid"),
                pid_in(workspace / "child.pid")]
        os.kill(process.pid, signum)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
    assert process.returncode == 1, stderr
    outcome = json.loads(stdout)
    assert (outcome["status"], outcome["verdict"], outcome["task_id"]) == (
        "aborted", "aborted", task_id)
    assert "notes.txt" in [c["path"] for c in outcome["changes"]]  # nothing rolled back
    assert f"{signum.name} received; stopping task {task_id}" in stderr
    assert query(home, "SELECT status, verdict FROM tasks WHERE id = ?", (task_id,)) == [
        ("aborted", "aborted")]
    assert all(pid is not None for pid in pids)
    assert not [pid for pid in pids if pid is not None and alive(pid)], "orphans left"


def test_without_json_the_banner_is_printed(tmp_path: Path, loopback_server) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    server = loopback_server([Turn(tool_calls=(call("run_command", command=LONG_COMMAND),))])
    process = start_cli(workspace, home, server.url)
    try:
        wait_until(lambda: pid_in(workspace / "shell.pid") is not None, "the command to run")
        os.kill(process.pid, signal.SIGTERM)
    finally:
        stdout, stderr = finish(process)
    assert process.returncode == 1, stderr
    assert stdout.startswith("Stopped at your request — nothing was rolled back."), stderr


STUBBORN = textwrap.dedent('''
    import asyncio, sys
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.runs.exit_signals import StopOnSignals
    from mercury_nb.runs.registry import Run

    async def stubborn():
        while True:  # a shutdown that never ends by itself
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                print("cancelled", flush=True)

    async def main(signals):
        task = asyncio.get_running_loop().create_task(stubborn())
        signals.attach(Run("stubborn", task, MercuryConfig()))
        print("ready", flush=True)
        await task

    with StopOnSignals(float(sys.argv[1]), 7, as_json=sys.argv[2:] == ["--json"]) as signals:
        asyncio.run(main(signals))
''')


def start_stubborn(tmp_path: Path, grace_s: float, *flags: str) -> subprocess.Popen[str]:
    script = tmp_path / "stubborn.py"
    script.write_text(STUBBORN)
    process = subprocess.Popen([sys.executable, str(script), str(grace_s), *flags],
                               env=cli_env(tmp_path / "home"), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    return process


def test_a_second_signal_ends_a_stuck_shutdown_at_once(tmp_path: Path) -> None:
    process = start_stubborn(tmp_path, 120, "--json")
    assert process.stdout is not None
    try:
        os.kill(process.pid, signal.SIGTERM)
        assert process.stdout.readline() == "cancelled\n"  # the first one stopped it, as Stop
        assert process.poll() is None  # and the grace (120 s) is not over
        started = time.monotonic()
        os.kill(process.pid, signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
    assert process.returncode == 7, stderr
    assert time.monotonic() - started < 10
    assert "SIGTERM again; exiting now." in stderr
    outcome = json.loads(stdout)  # the outcome is printed even so
    assert (outcome["task_id"], outcome["status"], outcome["verdict"]) == (
        "stubborn", "aborted", "aborted")


def test_a_shutdown_that_outlasts_its_grace_ends_the_process(tmp_path: Path) -> None:
    process = start_stubborn(tmp_path, grace_s=0.5)
    try:
        os.kill(process.pid, signal.SIGHUP)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
    assert process.returncode == 7, stderr
    assert "did not end within 0.5s of SIGHUP; exiting now." in stderr
    assert stdout.splitlines()[-1] == "Stopped by an interrupt — nothing was rolled back."
