"""Test-suite wiring: the shipped fixtures, a guard that fails any non-loopback connection, and
the ledger fixtures (a MERCURY_HOME, a settable clock, a ledger) the ledger and runs tests share."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.ledger.access import close_all
from mercury_nb.ledger.store import Ledger

pytest_plugins = ["mercury_nb.testing.pytest_plugin"]

_blocked: list[str] = []
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


class NonLoopbackConnection(ConnectionRefusedError):
    """Raised instead of connecting anywhere but this machine."""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def _check(sock: socket.socket, address: Any) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return  # AF_UNIX and friends stay on this machine
    host = str(address[0]) if isinstance(address, tuple) and address else str(address)
    if not _is_loopback(host):
        _blocked.append(f"{host}:{address[1] if isinstance(address, tuple) else '?'}")
        raise NonLoopbackConnection(f"tests may only connect to loopback, not {address!r}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _no_network_beyond_loopback() -> Iterator[None]:
    """Fail the test if anything tried to leave the machine, even if the error was swallowed."""
    start = len(_blocked)
    yield
    attempts = _blocked[start:]
    if attempts:
        pytest.fail(f"non-loopback connection attempted: {', '.join(attempts)}", pytrace=False)


@pytest.fixture(autouse=True)
def _isolated_mercury_home(tmp_path_factory: pytest.TempPathFactory,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test (and every kernel or subprocess it starts) keeps its work ledger in a
    temporary MERCURY_HOME, never in the user's ~/.mercury."""
    monkeypatch.setenv("MERCURY_HOME", str(tmp_path_factory.mktemp("mercury-home")))
    # no Lab's ledger handed down (a shell inside JupyterLab has one; a server extension
    # loaded by a test sets one in this process): put back after each test
    monkeypatch.delenv("MERCURY_LAB_HOME", raising=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "mercury-home"
    monkeypatch.setenv("MERCURY_HOME", str(folder))
    yield folder
    close_all()


class Clock:
    """A settable clock for the ledger's timestamps."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def ledger(home: Path, clock: Clock) -> Iterator[Ledger]:
    opened = Ledger(home / "ledger.sqlite3", clock=clock)
    yield opened
    opened.close()

