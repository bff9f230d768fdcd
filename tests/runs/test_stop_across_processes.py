"""Stop from anywhere, across real processes: a CLI task stopped by ``python -m mercury_nb stop``
from another process, and a ``%%mercury`` task in a real kernel stopped from the CLI. Each
ends ``aborted`` within a second of the request, with the running command's tree gone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from crossproc import (
    LONG_COMMAND,
    assert_stopped_like_the_stop_button,
    cli_env,
    pid_in,
    run_cli,
    running_task,
    wait_until,
)

from mercury_nb.testing import Turn, call


def test_a_cli_task_is_stopped_by_the_stop_command_of_another_process(
    tmp_path: Path, loopback_server
) -> None:
    home = tmp_path / "home"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = loopback_server([
        Turn(tool_calls=(call("write_file", path="notes.txt", content="kept\n"),
                         call("run_command", command=LONG_COMMAND),)),
    ])
    process = subprocess.Popen(
        [sys.executable, "-m", "mercury_nb", "run", "--permissions", "auto",
         "write notes, then wait", "--model",
         "openai/m", "--api-base", server.url, "--json"],
        cwd=workspace, env=cli_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: pid_in(workspace / "shell.pid") is not None
                   and running_task(home) is not None, "the long command to run")
        task_id = running_task(home)
        assert task_id is not None
        stopped = run_cli("stop", task_id[:8], cwd=workspace, home=home)
        assert stopped.returncode == 0, stopped.stderr
        assert task_id in stopped.stdout
        assert_stopped_like_the_stop_button(home, workspace, task_id)
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
    assert (workspace / "notes.txt").read_text() == "kept\n"

    again = run_cli("stop", task_id, cwd=workspace, home=home)
    assert again.returncode == 2
    assert "is not running" in again.stderr


def test_stopping_an_unknown_task_says_so_with_exit_code_2(tmp_path: Path) -> None:
    result = run_cli("stop", "feedfacecafe", cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 2
    assert "There is no task 'feedfacecafe'" in result.stderr


KERNEL_SETUP = f'''
from mercury_nb.testing import Turn, call, register_scripted_model
register_scripted_model("scripted/sleepy", [
    Turn(tool_calls=(call("write_file", path="notes.txt", content="kept\\n"),
                     call("run_command", command={LONG_COMMAND!r}),)),
])
'''


@pytest.mark.kernel
def test_a_kernel_task_is_stopped_from_the_cli(tmp_path: Path) -> None:
    from jupyter_client.manager import KernelManager

    home = tmp_path / "home"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(workspace), env={**cli_env(home), "MERCURY_PLAIN": "1",
                                                        "MERCURY_PERMISSIONS": "auto"})
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        for code in ("%load_ext mercury_nb", KERNEL_SETUP,
                     "%%mercury --model scripted/sleepy\nwrite notes, then wait"):
            reply = client.execute_interactive(code, timeout=60, output_hook=lambda msg: None)
            assert reply["content"]["status"] == "ok", reply["content"]
        wait_until(lambda: pid_in(workspace / "shell.pid") is not None
                   and running_task(home) is not None, "the kernel's command to run")
        task_id = running_task(home)
        assert task_id is not None
        stopped = run_cli("stop", task_id, cwd=workspace, home=home)
        assert stopped.returncode == 0, stopped.stderr
        assert_stopped_like_the_stop_button(home, workspace, task_id)
        assert (workspace / "notes.txt").read_text() == "kept\n"
        outputs: list[str] = []
        reply = client.execute_interactive(
            "from mercury_nb.runs import registry\n"
            "o = registry.latest().result\nprint(o.status, o.verdict, o.task_id)",
            timeout=60,
            output_hook=lambda msg: outputs.append(msg["content"].get("text", "")),
        )
        assert "".join(outputs).split() == ["aborted", "aborted", task_id]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
