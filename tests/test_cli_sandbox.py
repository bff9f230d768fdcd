"""Commands without your secrets, optionally sandboxed, through the CLI (issue 21 items 4-5):
a planted key is absent from a command's ``env`` unless passed with ``--pass-env``; a task is
verified under ``--sandbox workspace-write``; a sandbox that cannot run refuses the task."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from mercury_nb.contract.sandbox_policy import SandboxReady
from mercury_nb.testing import Turn, call
from mercury_nb.tools import sandbox_probe
from tests.test_cli import run_cli

PLANTED = {
    "OPENAI_API_KEY": "sk-plantedOpenAIkey0123456789",
    "MY_SERVICE_TOKEN": "tok-planted-service-4711",
    "DB_PASSWORD": "pw-planted-db-9876",
}
needs_bwrap = pytest.mark.skipif(
    not isinstance(sandbox_probe.probe("bwrap", 30.0), SandboxReady),
    reason="bubblewrap cannot run here (.ci/run installs it)")


def _workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def _env_file(path: Path) -> dict[str, str]:
    lines = path.read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


@pytest.mark.parametrize("passed", [(), ("MY_SERVICE_TOKEN",)], ids=["withheld", "passed"])
def test_a_planted_key_is_absent_from_a_commands_env_unless_passed(
    tmp_path: Path, loopback_server, passed: tuple[str, ...]
) -> None:
    workspace = _workspace(tmp_path)
    written = tmp_path / "seen-env.txt"  # outside the workspace: the question changes nothing
    server = loopback_server([
        Turn(tool_calls=(call("run_command", command=f"env > {written}; env"),)),
        Turn(text="A command gets the environment listed above."),
    ])
    flags = [word for name in passed for word in ("--pass-env", name)]
    result = run_cli("run", "--permissions", "auto",
                     "What environment does a command get?", "--chat", "--json",
                     "--model", "openai/m", "--api-base", server.url,
                     "--workdir", str(workspace), *flags, cwd=tmp_path,
                     env_extra={**PLANTED, "MERCURY_API_KEY": "mk-planted-mercury-555"})
    assert result.returncode == 0, result.stdout + result.stderr
    seen = _env_file(written)
    assert sorted(name for name in PLANTED if name in seen) == sorted(passed)
    assert "MERCURY_API_KEY" not in seen
    assert "PATH" in seen and seen["MERCURY_HOME"]  # the rest of the environment is there
    for name in passed:
        assert seen[name] == PLANTED[name]
    # what the model saw: never a planted value, passed or not (the output is redacted)
    sent = json.dumps(server.requests)
    assert [value for value in PLANTED.values() if value in sent] == []


@needs_bwrap
def test_a_task_is_verified_under_the_sandbox(tmp_path: Path, loopback_server) -> None:
    workspace = _workspace(tmp_path)
    server = loopback_server([
        Turn(tool_calls=(call("create_file", path="test_a.py",
                              content="def test_a():\n    assert 1 + 1 == 2\n"),)),
        Turn(tool_calls=(call("run_command", command="cat /proc/1/cmdline > init.txt; "
                              "touch ~/.mercury-sandbox-escape"),)),
        Turn(tool_calls=(call("run_command", command="python -m pytest -q test_a.py"),)),
        Turn(text="Added test_a.py; pytest passes."),
    ])
    result = run_cli("run", "--permissions", "auto", "add a test", "--json", "--model",
                     "openai/m", "--api-base",
                     server.url, "--workdir", str(workspace), "--sandbox", "workspace-write",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "completed", outcome["banner"]
    assert outcome["evidence"][-1]["exit_code"] == 0
    assert b"bwrap" in (workspace / "init.txt").read_bytes()  # PID 1 of its namespace
    assert not (Path.home() / ".mercury-sandbox-escape").exists()


def _broken_bwrap(folder: Path) -> Path:
    path = folder / "bwrap"
    path.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\n"
                    "exit 1\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize("broken", [False, True], ids=["bwrap-missing", "namespaces-off"])
def test_a_sandbox_that_cannot_run_refuses_the_task(tmp_path: Path, loopback_server,
                                                     broken: bool) -> None:
    workspace = _workspace(tmp_path)
    bwrap = _broken_bwrap(tmp_path) if broken else tmp_path / "no-bwrap"
    server = loopback_server([])  # any request at all fails the test at teardown
    result = run_cli("run", "touch ran.txt in the workspace", "--model", "openai/m",
                     "--api-base", server.url, "--workdir", str(workspace),
                     "--sandbox", "workspace-write",
                     cwd=tmp_path, env_extra={"MERCURY_BWRAP_PATH": str(bwrap)})
    assert result.returncode == 2
    if broken:
        assert "No permissions to create new namespace" in result.stderr
        assert "user namespaces" in result.stderr
    else:
        assert f"{bwrap} was not found" in result.stderr
        assert "apt-get install bubblewrap" in result.stderr
    assert server.requests == []  # nothing started: no request, no command
    listed = run_cli("tasks", "--json", cwd=tmp_path)
    assert json.loads(listed.stdout) == []
