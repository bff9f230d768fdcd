"""A task's checkpoint as redacted JSON rows, each step writing only what changed since the last.

A task is checkpointed after every step, and each checkpoint holds the whole conversation
and tool log: serializing or writing them whole each time would make a long task's
checkpoints quadratic, in time and in bytes written. Messages never change once in the
conversation (compaction replaces them), and tool-log entries are immutable, so each
checkpoint is stored as a head (everything else, small) and two lists of rows
(``checkpoint_parts``: the messages and the tool log, a row per item). A step writes the
head and the rows after the part both lists still share with the rows last written: on an
ordinary step, its new messages and entries; after a compaction, the rows from the first
replaced message on. The shared start is checked by identity in C, not walked in Python.
The rows are taken as written only once their transaction committed
(:meth:`CheckpointJson.wrote`): after a failed write, the next one starts from the rows the
ledger still holds. Used on the ledger's writer thread only.
"""

from __future__ import annotations

import json
from operator import is_
from typing import Any

from mercury_nb.contract.redaction import redact_data
from mercury_nb.ledger.records import PARTS, STORED_VERSION, CheckpointRows, PartRows


class RecentRedactions:
    """The texts the last redaction redacted, for the next one (only those)."""

    def __init__(self) -> None:
        self._last: dict[str, str] = {}
        self._now: dict[str, str] = {}

    def get(self, key: str, /) -> str | None:
        known = self._now.get(key)
        if known is None:
            known = self._last.get(key)
            if known is not None:
                self._now[key] = known
        return known

    def __setitem__(self, key: str, value: str, /) -> None:
        self._now[key] = value

    def redact(self, data: Any, secrets: tuple[str, ...]) -> Any:
        """``data`` redacted, the texts of the previous call reused; this call's kept."""
        try:
            return redact_data(data, secrets, self)
        finally:
            self._last, self._now = self._now, {}


def _shared(written: list[Any], items: list[Any]) -> int:
    """How many items at the start of ``items`` are ``written``'s (by identity)."""
    kept = len(written)
    if len(items) >= kept and all(map(is_, items[:kept], written)):
        return kept  # every step but a compaction's: checked in C
    same = 0
    for old, new in zip(written, items, strict=False):
        if old is not new:
            break
        same += 1
    return same


class CheckpointJson:
    """Turns one task's successive checkpoints into rows (see the module docstring)."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self.secrets = secrets
        self.memo = RecentRedactions()
        self._written: dict[str, list[Any]] = {part: [] for part in PARTS}
        """Each list's items as the rows last written hold them (kept alive: identity)."""
        self.serialized = 0
        """Items serialized so far (the per-step work the tests count)."""

    def _piece(self, item: Any) -> str:
        self.serialized += 1
        return json.dumps(redact_data(item, self.secrets))

    def rows(self, data: dict[str, Any]) -> CheckpointRows:
        """``data`` (a checkpoint) as its head and new rows, redacted, ASCII only."""
        items = {part: list(data.get(part) or ()) for part in PARTS}
        parts = []
        for part in PARTS:
            keep = _shared(self._written[part], items[part])
            parts.append(PartRows(part, keep, tuple(self._piece(item)
                                                    for item in items[part][keep:])))
        rest = {k: v for k, v in data.items() if k not in (*PARTS, "version")}
        rest[STORED_VERSION] = data.get("version")
        rest["parts"] = {part: len(items[part]) for part in PARTS}
        head = json.dumps(self.memo.redact(rest, self.secrets))
        return CheckpointRows(head, tuple(parts), items)

    def wrote(self, rows: CheckpointRows) -> None:
        """``rows`` are in the ledger: the next checkpoint's rows start from them."""
        self._written = rows.items

