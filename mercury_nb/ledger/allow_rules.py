"""The allow rules saved for a workspace ("Always allow"): save, list and revoke them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")


class LedgerRules:
    """Mixed into :class:`~mercury_nb.ledger.store.Ledger`, which owns ``_write`` and
    ``_guarded``. ``workspace`` is the workspace folder as the tasks' rows name it."""

    clock: Callable[[], float]

    def _write(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        raise NotImplementedError

    def _guarded(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        raise NotImplementedError

    def save_rule(self, workspace: str, rule: str) -> None:
        """Keep ``rule`` for every later task in ``workspace`` (once)."""
        now = self.clock()
        self._write(lambda conn: conn.execute(
            "INSERT OR IGNORE INTO allow_rules (workspace, rule, created_at) VALUES (?, ?, ?)",
            (workspace, rule, now)))

    def revoke_rule(self, workspace: str, rule: str) -> bool:
        """Forget ``rule`` for ``workspace``; False when it was not saved there."""
        def write(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute("DELETE FROM allow_rules WHERE workspace = ? AND rule = ?",
                                  (workspace, rule))
            return cursor.rowcount > 0

        return self._write(write)

    def rules_for(self, workspace: str) -> list[str]:
        """The rules saved for ``workspace``, oldest first."""
        rows = self._guarded(lambda conn: conn.execute(
            "SELECT rule FROM allow_rules WHERE workspace = ? ORDER BY created_at, rule",
            (workspace,)).fetchall())
        return [str(row[0]) for row in rows]
