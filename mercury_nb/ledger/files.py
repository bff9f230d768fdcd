"""The ledger file on disk: its path, opening it in WAL mode, moving a damaged one aside."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from mercury_nb.ledger.schema import migrate

LEDGER_FILE = "ledger.sqlite3"
BUSY_TIMEOUT_S = 10.0
"""How long a write waits for another process's transaction before giving up."""

_CORRUPTION_CODES = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB


def ledger_path(home: Path | str) -> Path:
    """``$MERCURY_HOME/ledger.sqlite3`` (``~`` expanded)."""
    return Path(home).expanduser() / LEDGER_FILE


def is_corruption(error: BaseException) -> bool:
    """Whether SQLite says the file is damaged or not a database (not merely busy)."""
    if not isinstance(error, sqlite3.DatabaseError):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in _CORRUPTION_CODES
    text = str(error).lower()
    return "malformed" in text or "not a database" in text


def connect(path: Path) -> sqlite3.Connection:
    """A connection in WAL mode with the schema migrated. Processes that open a new ledger
    at the same moment contend for the switch to WAL, which SQLite answers "locked" without
    waiting: that setup is tried again for up to :data:`BUSY_TIMEOUT_S`."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    pause = 0.005
    while True:
        try:
            return _connect_once(path)
        except sqlite3.OperationalError as error:
            if not _contended(error) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def _contended(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def _connect_once(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL").fetchone()
        conn.execute("PRAGMA synchronous = NORMAL")
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def move_aside(path: Path, now: float) -> Path:
    """Rename a damaged ledger (and its ``-wal`` / ``-shm`` files) to ``<name>.corrupt-<UTC>``."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    number = 1
    while target.exists():
        number += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{number}")
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{path}{suffix}")
        if source.exists():
            source.replace(f"{target}{suffix}")
    return target
