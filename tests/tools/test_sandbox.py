"""--sandbox workspace-write: commands under bubblewrap write only the workspace and a private
/tmp, reach no network unless allowed, are killed as a tree on Stop, and never run unsandboxed."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psutil
import pytest

from mercury_nb.agent.notebook_process import run_notebook_check
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.sandbox_policy import SandboxReady
from mercury_nb.tools import processes, sandbox_probe
from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.registry import ToolRegistry
from mercury_nb.workspace.confinement import Workspace

PY = shlex.quote(sys.executable)
_PROBED = sandbox_probe.probe("bwrap", 30.0)
needs_bwrap = pytest.mark.skipif(not isinstance(_PROBED, SandboxReady),
                                 reason=f"bubblewrap cannot run here: {_PROBED}")


def sandboxed(root: Path, **changes: Any) -> ToolContext:
    config = MercuryConfig(workdir=root, sandbox="workspace-write", **changes)
    return ToolContext(root=Workspace(root), config=config, process_scope="sandbox-test")


async def run(registry: ToolRegistry, ctx: ToolContext, command: str) -> ToolResult:
    return await registry.execute("run_command", json.dumps({"command": command}), ctx)


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from the loopback server"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def loopback_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _fetch(client: str, url: str) -> str:
    if client == "curl":
        return f"curl -sS --max-time 5 {url}"
    script = ("import sys, urllib.request; "
              "print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())")
    return f"{PY} -c {shlex.quote(script)} {url}"


@needs_bwrap
async def test_a_write_outside_the_workspace_fails_inside_it_works(
    registry: ToolRegistry, root: Path, tmp_path: Path
) -> None:
    ctx = sandboxed(root)
    sibling = tmp_path / "outside" / "written.txt"  # under the host's /tmp: not even seen
    assert not (await run(registry, ctx, f"echo x > {sibling}")).ok
    assert not sibling.exists()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as elsewhere:  # a folder it can see
        target = Path(elsewhere) / "written.txt"
        result = await run(registry, ctx, f"ls {elsewhere} && echo x > {target}")
        assert not result.ok and "Read-only file system" in result.content, result.content
        assert not target.exists()
    home = Path.home() / f".mercury-sandbox-probe-{uuid.uuid4().hex[:8]}"
    assert "Read-only file system" in (await run(registry, ctx, f"touch {home}")).content
    assert not home.exists()
    inside = await run(registry, ctx, "echo made > inside.txt && cat inside.txt && pwd")
    assert inside.ok, inside.content
    assert inside.content == f"made\n{root.resolve()}\nexit code: 0"
    assert (root / "inside.txt").read_text() == "made\n"


@needs_bwrap
async def test_tmp_is_private(registry: ToolRegistry, root: Path) -> None:
    name = f"/tmp/mercury-sandbox-{uuid.uuid4().hex[:8]}"
    result = await run(registry, sandboxed(root), f"echo t > {name} && cat {name} && echo $TMPDIR")
    assert result.content == "t\n/tmp\nexit code: 0"
    assert not Path(name).exists()


@needs_bwrap
@pytest.mark.parametrize("client", ["curl", "python"])
async def test_no_network_unless_asked(registry: ToolRegistry, root: Path, loopback_url: str,
                                       client: str) -> None:
    if client == "curl" and shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    command = _fetch(client, loopback_url)
    closed = await run(registry, sandboxed(root), command)
    assert not closed.ok
    assert "hello from the loopback server" not in closed.content
    opened = await run(registry, sandboxed(root, sandbox_network=True), command)
    assert opened.ok, opened.content
    assert "hello from the loopback server" in opened.content


@needs_bwrap
async def test_the_hosts_daemon_sockets_in_run_are_out_of_reach(
        registry: ToolRegistry, root: Path) -> None:
    """A Unix socket under /run (the session bus, docker.sock) is a way out of any sandbox
    that leaves it connectable: /run is an empty tmpfs inside."""
    import os
    import socket

    if not os.access("/run", os.W_OK):
        pytest.skip("a socket can be made in /run only as root")
    path = f"/run/mercury-test-{uuid.uuid4().hex[:8]}.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    try:
        script = ("import socket, sys; s = socket.socket(socket.AF_UNIX); "
                  "s.connect(sys.argv[1]); print('DAEMON-REACHED')")
        command = f"{PY} -c {shlex.quote(script)} {path}"
        outside = await run(registry, ToolContext(root=Workspace(root),
                                                  config=MercuryConfig(workdir=root)), command)
        assert "DAEMON-REACHED" in outside.content  # the check itself can reach it
        inside = await run(registry, sandboxed(root), command)
        assert not inside.ok and "DAEMON-REACHED" not in inside.content
    finally:
        server.close()
        os.unlink(path)


@needs_bwrap
async def test_other_processes_environments_are_out_of_reach(
        registry: ToolRegistry, root: Path) -> None:
    """Without the sandbox a command reads the environment another process of the user's
    started with (the agent's, the server's) from /proc; inside it sees no host process."""
    import os
    import subprocess

    key = "sk-elsewhere-" + uuid.uuid4().hex
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                              env={**os.environ, "OPENAI_API_KEY": key})
    try:
        command = f"tr '\\0' '\\n' < /proc/{holder.pid}/environ | grep -c {key}"
        outside = await run(registry, ToolContext(root=Workspace(root),
                                                  config=MercuryConfig(workdir=root)), command)
        assert outside.ok and outside.content.startswith("1"), outside.content
        inside = await run(registry, sandboxed(root), command)
        assert not inside.ok and not inside.content.startswith("1"), inside.content
    finally:
        holder.kill()
        holder.wait(timeout=10)


@needs_bwrap
async def test_the_process_tree_is_confined(registry: ToolRegistry, root: Path) -> None:
    result = await run(registry, sandboxed(root), "echo $$; ps -e -o pid= | wc -l")
    assert result.ok, result.content
    shell_pid, count = result.content.splitlines()[:2]
    assert int(shell_pid) < 10  # a PID namespace of its own: the shell is one of the first
    assert int(count) < 10  # it sees only its own processes, not this machine's


def _running(token: str) -> list[int]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if token in " ".join(proc.info.get("cmdline") or []):
            found.append(proc.pid)
    return found


@needs_bwrap
async def test_stop_kills_the_sandboxed_tree_in_bounded_time(
    registry: ToolRegistry, root: Path
) -> None:
    seconds = f"{300 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 997}"
    task = asyncio.create_task(run(registry, sandboxed(root),
                                   f"sleep {seconds} & sleep {seconds} & wait"))
    deadline = time.monotonic() + 30
    while len(_running(f"sleep {seconds}")) < 2:
        assert time.monotonic() < deadline, "the sandboxed sleeps never started"
        await asyncio.sleep(0.05)
    stopped = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    while _running(f"sleep {seconds}"):
        assert time.monotonic() - stopped < 10, "the sandboxed tree survived the Stop"
        await asyncio.sleep(0.05)
    assert processes.live_commands("sandbox-test") == []


async def test_a_missing_bubblewrap_never_runs_the_command_unsandboxed(
    registry: ToolRegistry, root: Path
) -> None:
    ctx = sandboxed(root, bwrap_path=str(root.parent / "no-such-bwrap"))
    result = await run(registry, ctx, "touch ran.txt")
    assert not result.ok
    assert "the sandbox could not start, so the command did not run" in result.content
    assert "no-such-bwrap was not found" in result.content
    assert not (root / "ran.txt").exists()


@needs_bwrap
async def test_the_notebook_check_runs_in_the_sandbox(root: Path) -> None:
    import nbformat

    with tempfile.TemporaryDirectory(dir="/var/tmp") as elsewhere:
        outside = Path(elsewhere) / "from-the-notebook.txt"
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell("open('made.txt', 'w').write('y')"),
                    nbformat.v4.new_code_cell(f"open({str(outside)!r}, 'w').write('n')")]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nbformat.write(nb, str(root / "check.ipynb"))
        config = MercuryConfig(workdir=root, sandbox="workspace-write")
        ran = await run_notebook_check(root / "check.ipynb", 120, "check.ipynb", "sandbox-nb",
                                       root=root, config=config)
        assert not ran.ok and "Read-only file system" in ran.detail, ran.detail
        assert (root / "made.txt").read_text() == "y"  # the first cell ran, in the workspace
        assert not outside.exists()


@needs_bwrap
async def test_a_python_environment_under_tmp_stays_visible(
        registry: ToolRegistry, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clone (and its virtualenv) under /tmp: the private /tmp would hide the interpreter
    the commands and the notebook check start, so the product's own environment is bound
    read-only over it; the rest of /tmp stays private."""
    from mercury_nb.tools import command_launch

    with tempfile.TemporaryDirectory(dir="/tmp") as env_dir, \
            tempfile.TemporaryDirectory(dir="/tmp") as other:
        (Path(env_dir) / "tool.txt").write_text("the environment\n")
        (Path(other) / "private.txt").write_text("not for the sandbox\n")
        monkeypatch.setattr(command_launch, "own_environment", lambda: (env_dir,))
        seen = await run(registry, sandboxed(root), f"cat {env_dir}/tool.txt")
        assert seen.ok and "the environment" in seen.content, seen.content
        hidden = await run(registry, sandboxed(root), f"cat {other}/private.txt")
        assert not hidden.ok and "not for the sandbox" not in hidden.content
        kept = await run(registry, sandboxed(root), f"touch {env_dir}/written")
        assert not kept.ok and not (Path(env_dir) / "written").exists()


def test_the_own_environment_names_the_interpreters_prefix() -> None:
    from mercury_nb.tools.command_launch import own_environment

    names = own_environment()
    assert str(Path(sys.prefix).resolve()) in names
    assert any((Path(p) / "mercury_nb").is_dir() for p in names)  # the package's own root
