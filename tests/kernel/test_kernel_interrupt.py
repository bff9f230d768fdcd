"""A kernel interrupt (the notebook's Stop button) ends a blocking ``%%mercury --wait`` cell
within 2 s, whatever the task was blocked on (a trickling server, or code of its own that
``run_in_kernel`` runs in the kernel and that never returns): the cell replies, the task is
recorded aborted, the code's thread ends, and the next cell runs. Every wait is on an observed
state with a deadline, never a sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import start_new_kernel

from mercury_nb.testing import LoopbackServer, Trickle, Turn, call
from tests.hostile.test_endings_stop import SETTLE_S, STOP_BOUND_S, cli_env, query, wait_until
from tests.kernel.test_kernel_stop import run_cell

pytestmark = pytest.mark.kernel

SPIN = ("import itertools, pathlib\npathlib.Path('spinning.flag').touch()\n"
        "for spins in itertools.count():\n    pass\n")
"""Code that never returns; ``spinning.flag`` in the workspace tells it has started."""

BLOCKED_ON = [
    pytest.param(Turn("Writing the notes now, slowly", fault=Trickle(0.5, after_chunks=1)),
                 id="trickling-request"),
    pytest.param(Turn(tool_calls=(call("run_in_kernel", code=SPIN),)), id="run-in-kernel"),
]


def tasks(home: Path) -> list[tuple[str, str]]:
    return [(str(i), str(s)) for i, s in query(home, "SELECT id, status FROM tasks")]


def spinning(kc: Any) -> bool:
    """Whether the code run by ``run_in_kernel`` is alive in the kernel (its thread)."""
    _, printed = run_cell(kc, "import threading as _t\n"
                              "print('spinning', any(t.name.startswith('mercury-<run_in_kernel')"
                              " and t.is_alive() for t in _t.enumerate()))")
    return "spinning True" in printed


@pytest.mark.parametrize("turn", BLOCKED_ON)
def test_an_interrupt_ends_a_waiting_cell_within_2s(
    tmp_path: Path, loopback_server: Callable[..., LoopbackServer], turn: Turn
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    server = loopback_server([turn])
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(workspace), env=cli_env(home))
    try:
        reply, _ = run_cell(kc, "%load_ext mercury_nb")
        assert reply["content"]["status"] == "ok", reply["content"]
        msg_id = kc.execute(f"%%mercury --wait --permissions auto --model openai/m "
                                f"--api-base {server.url}\n"
                            "write the notes")
        in_code = bool(turn.tool_calls)
        wait_until(lambda: [status for _, status in tasks(home)] == ["running"]
                   and bool(server.requests)
                   and (not in_code or (workspace / "spinning.flag").exists()),
                   "the task to be blocked")
        started = time.monotonic()
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=SETTLE_S)
        took = time.monotonic() - started
        assert reply["parent_header"]["msg_id"] == msg_id
        assert took < STOP_BOUND_S, f"the cell replied {took:.2f} s after the interrupt"
        ((task_id, status),) = tasks(home)
        assert status == "aborted", (task_id, status)
        reply, printed = run_cell(kc, "print('free', 6 * 7)")
        assert reply["content"]["status"] == "ok" and "free 42" in printed, printed
        if in_code:
            deadline = started + STOP_BOUND_S
            while spinning(kc):
                assert time.monotonic() < deadline, (
                    "the code run_in_kernel started outlived the interrupt by "
                    f"{time.monotonic() - started:.2f} s")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
