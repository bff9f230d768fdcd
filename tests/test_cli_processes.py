"""SIGTERM or SIGHUP to a running CLI kills the whole tree its command started, setsid too (and
the task ends like Stop, exit code 1: tests/runs/test_exit_signals.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mercury_nb.testing import Turn, call
from mercury_nb.testing.orphans import orphan_writer, read_pid, wait_until_gone


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_a_signal_to_the_cli_kills_its_commands_setsid_children(
    tmp_path: Path, loopback_server, signum: int
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pid_file = tmp_path / "orphan.pid"
    server = loopback_server([
        Turn(tool_calls=(call("run_command", command=f"{orphan_writer(pid_file)}; sleep 60"),)),
    ])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERCURY_")}
    env.update(MERCURY_HOME=str(tmp_path / "home"), MERCURY_API_KEY="sk-test-key")
    process = subprocess.Popen(
        [sys.executable, "-m", "mercury_nb", "run", "--permissions", "auto",
         "start the helper", "--model", "openai/m",
         "--api-base", server.url, "--json"],
        cwd=workspace, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        pid = read_pid(pid_file, 60)
        os.kill(process.pid, signum)
        assert wait_until_gone(pid), f"setsid child {pid} outlived the CLI's {signum!r}"
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
    assert process.returncode == 1
