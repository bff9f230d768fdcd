"""The kernel's exit (shutdown, SIGTERM, SIGHUP) kills what run_command left running."""

from __future__ import annotations

import signal
import textwrap
from pathlib import Path

import pytest
from jupyter_client.manager import start_new_kernel

from mercury_nb.testing.orphans import orphan_writer, read_pid, wait_until_gone

pytestmark = pytest.mark.kernel

START = textwrap.dedent(
    """
    import json
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.tools.base import ToolContext
    from mercury_nb.tools.registry import default_registry
    from mercury_nb.workspace.confinement import Workspace

    ctx = ToolContext(root=Workspace({root!r}), config=MercuryConfig(workdir={root!r}))
    args = json.dumps({{"command": {cmd!r}}})
    result = await default_registry().execute("run_command", args, ctx)
    print(result.content)
    """
)


@pytest.mark.parametrize("event", ["shutdown", "sigterm", "sighup"])
def test_kernel_exit_kills_a_commands_setsid_child(tmp_path: Path, event: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pid_file = tmp_path / "orphan.pid"
    command = f"{orphan_writer(pid_file)}; echo started"
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(workspace))
    try:
        outputs: list[str] = []
        reply = kc.execute_interactive(
            START.format(root=str(workspace), cmd=command), timeout=120,
            output_hook=lambda msg: outputs.append(str(msg["content"].get("text", ""))),
        )
        assert reply["content"]["status"] == "ok", reply["content"]
        assert "killed when the task ends" in "".join(outputs)
        pid = read_pid(pid_file, 30)
        match event:
            case "shutdown":
                km.shutdown_kernel(now=False)
            case "sigterm":
                km.signal_kernel(signal.SIGTERM)
            case "sighup":
                km.signal_kernel(signal.SIGHUP)
        assert wait_until_gone(pid), f"setsid child {pid} outlived the kernel's {event}"
    finally:
        kc.stop_channels()
        if km.is_alive():
            km.shutdown_kernel(now=True)
