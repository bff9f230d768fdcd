"""Runs tests: each gets its own MERCURY_HOME, and every ledger opened is closed after."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mercury_nb.ledger.access import close_all
from mercury_nb.ledger.store import Ledger


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

