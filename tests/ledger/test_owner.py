"""Owner identity: a live process is alive, an exited or reaped one is not, tokens pin pids."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from mercury_nb.ledger.owner import current_owner, is_alive, start_token


def test_this_process_is_alive() -> None:
    me = current_owner()
    assert me.pid == os.getpid()
    assert is_alive(me.pid, me.token)


def test_an_exited_process_is_dead() -> None:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    assert not is_alive(process.pid, "whatever")
    assert not is_alive(process.pid, "")


def test_a_zombie_is_dead() -> None:
    if sys.platform != "linux":
        pytest.skip("zombies are read from /proc")
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped yet
        assert start_token(process.pid) is None
        assert not is_alive(process.pid, "")
    finally:
        process.wait()


@pytest.mark.parametrize(
    ("pid", "token", "alive"),
    [
        pytest.param(None, None, False, id="no-pid"),
        pytest.param(0, "", False, id="pid-zero"),
    ],
)
def test_missing_owners_are_dead(pid: int | None, token: str | None, alive: bool) -> None:
    assert is_alive(pid, token) is alive


def test_a_different_start_token_means_another_process() -> None:
    me = current_owner()
    if not me.token:
        pytest.skip("no start tokens on this platform")
    assert not is_alive(me.pid, me.token + "x")
