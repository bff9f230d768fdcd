"""The headless CLI, run as a real subprocess against the loopback server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mercury_nb.testing import Turn, call


def run_cli(
    *args: str, cwd: Path, env_extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERCURY_")}
    env.update({"MERCURY_HOME": str(cwd / ".mercury-home"), "MERCURY_RETRY_BASE_S": "0"})
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "mercury_nb", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("run", ""), id="empty-task"),
        pytest.param(("run", "x", "--max-steps", "0"), id="zero-steps"),
        pytest.param(("run", "x", "--bogus"), id="unknown-flag"),
        pytest.param(("run", "x", "--workdir", "no/such/dir"), id="missing-workdir"),
        pytest.param((), id="no-command"),
    ],
)
def test_bad_arguments_exit_2_and_start_nothing(tmp_path: Path, args: tuple[str, ...]) -> None:
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert "usage:" in result.stderr
    assert result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_completed_task_prints_json_and_exits_0(tmp_path: Path, loopback_server) -> None:
    server = loopback_server(
        [
            Turn(
                tool_calls=(
                    call("create_file", path="test_a.py", content="def test_a():\n    pass\n"),
                )
            ),
            Turn(tool_calls=(call("run_command", command="python -m pytest -q test_a.py"),)),
            Turn(text="Done and verified."),
        ]
    )
    result = run_cli(
        "run", "--permissions", "auto",
        "add a test",
        "--model",
        "openai/m",
        "--api-base",
        server.url,
        "--json",
        cwd=tmp_path,
        env_extra={"MERCURY_API_KEY": "sk-cli-secret-42"},
    )
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "completed"
    assert outcome["verdict"] == "text-stop"
    assert outcome["answer"] == "Done and verified."
    assert [c["path"] for c in outcome["changes"]] == ["test_a.py"]
    assert outcome["evidence"][0]["exit_code"] == 0
    assert "sk-cli-secret-42" not in result.stdout + result.stderr


def test_paused_task_exits_3(tmp_path: Path, loopback_server) -> None:
    server = loopback_server(
        [Turn(tool_calls=(call("run_command", command=f"echo {i}"),)) for i in range(7)]
    )
    result = run_cli(
        "run", "--permissions", "auto",
        "build it",
        "--model",
        "openai/m",
        "--api-base",
        server.url,
        "--max-steps",
        "1",
        cwd=tmp_path,
        env_extra={"MERCURY_API_KEY": "sk-x"},
    )
    assert result.returncode == 3, result.stderr
    assert result.stdout.startswith("I've paused for now")


def test_failed_task_exits_1(tmp_path: Path, loopback_server) -> None:
    server = loopback_server([Turn(text="cut", finish_reason=None)])
    result = run_cli(
        "run",
        "What is 2+2?",
        "--model",
        "openai/m",
        "--api-base",
        server.url,
        "--json",
        cwd=tmp_path,
        env_extra={"MERCURY_API_KEY": "sk-x", "MERCURY_RETRY_ATTEMPTS": "0"},
    )
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["status"] == "failed"


def test_a_server_without_tools_fails_with_exit_1_and_offers_no_continue(
    tmp_path: Path, loopback_server
) -> None:
    from mercury_nb.testing import llama_cpp_props

    server = loopback_server([Turn(text="```python\nprint('hello world')\n```")],
                             routes=llama_cpp_props(8192, supports_tools=False))
    result = run_cli("run", "Create hello.py that prints hello world, and run it.",
                     "--model", "smollm2", "--api-base", server.url, "--json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    outcome = json.loads(result.stdout)
    assert (outcome["status"], outcome["resumable"]) == ("failed", False)
    assert "continue" not in outcome["banner"].lower()
    assert len(server.requests) == 1
    again = run_cli("continue", outcome["task_id"], cwd=tmp_path)
    assert again.returncode != 0 and "cannot be continued" in (again.stdout + again.stderr)
    assert len(server.requests) == 1, "nothing was resumed"
