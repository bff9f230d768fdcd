"""Opening the ledger once per process, and the startup pass: recover, prune, tell the user.

Light on purpose: the extension calls :func:`startup` while loading, so this imports only
the SQLite store (no pydantic, no agent loop, never litellm). The writer is created when a
task first records.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mercury_nb.ledger.files import ledger_path
from mercury_nb.ledger.store import Ledger
from mercury_nb.ledger.texts import LEDGER_UNAVAILABLE, RECOVERED_NOTICE

if TYPE_CHECKING:
    from mercury_nb.ledger.writer import LedgerWriter

@dataclass
class LedgerHandle:
    """The process's ledger connection and its writer thread."""

    ledger: Ledger
    _writer: LedgerWriter | None = field(default=None, repr=False)

    @property
    def writer(self) -> LedgerWriter:
        if self._writer is None:
            from mercury_nb.ledger.writer import writer_for

            self._writer = writer_for(self.ledger)
        return self._writer

    def flush(self) -> None:
        """Wait for this process's queued writes (so reads see them)."""
        if self._writer is not None:
            self._writer.flush()


_handles: dict[Path, LedgerHandle] = {}
_lock = threading.Lock()
_told: set[str] = set()
"""Failures already reported: an unusable ledger is mentioned once per process, not per cell."""


def open_ledger(home: Path | str) -> LedgerHandle:
    """The ledger at ``home`` (opened once per process). Raises ``OSError`` or
    ``sqlite3.Error`` when the file cannot be used at all."""
    path = ledger_path(home)
    key = path.parent.resolve() / path.name
    with _lock:
        handle = _handles.get(key)
        if handle is None:
            handle = LedgerHandle(Ledger(key))
            _handles[key] = handle
        return handle


def close_all() -> None:
    """Flush and close every ledger this process opened (tests, interpreter shutdown)."""
    with _lock:
        handles = list(_handles.values())
        _handles.clear()
    for handle in handles:
        if handle._writer is not None:
            handle._writer.close()
        handle.ledger.close()


@dataclass(frozen=True)
class Startup:
    """What the startup pass found: the handle (None when unusable) and lines for the user."""

    handle: LedgerHandle | None
    notices: tuple[str, ...] = ()
    recovered: tuple[str, ...] = ()


def startup(home: Path | str, *, keep_finished: int | None = None,
            keep_days: float | None = None) -> Startup:
    """Open the ledger, turn tasks of dead processes into paused ones, prune finished tasks
    (when limits are given). Never raises: problems become notices (an unusable ledger is
    reported once per process)."""
    try:
        handle = open_ledger(home)
        ledger = handle.ledger
        handle.flush()
        recovered = tuple(ledger.recover_interrupted())
        if (keep_finished is not None and keep_days is not None
                and ledger.prune(keep_finished, keep_days)):
            from mercury_nb.workspace.undo_store import prune_store

            prune_store(home, ledger.known_ids, ledger.clock())  # undo's copies too
    except Exception as error:
        text = LEDGER_UNAVAILABLE.format(path=ledger_path(home),
                                         error=f"{type(error).__name__}: {error}")
        told = text in _told
        _told.add(text)
        return Startup(None, () if told else (text,))
    notices = list(ledger.notices)
    ledger.notices.clear()
    if recovered:
        notices.append(RECOVERED_NOTICE.format(count=len(recovered), ids=", ".join(recovered)))
    return Startup(handle, tuple(notices), recovered)
