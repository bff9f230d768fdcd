"""A task's checkpoint as redacted JSON, reusing what the previous one already serialized.

A task is checkpointed after every step, and each checkpoint holds the whole conversation
and tool log: redacting and serializing them again each time would make a long turn's
checkpoints quadratic. Messages never change once in the conversation (compaction replaces
them), and tool-log entries are immutable with a unique ``seq``, so each is redacted and
serialized once, and every later checkpoint joins the stored pieces. Only the pieces of the
latest checkpoint are kept: the cache never outgrows one checkpoint. Used on the ledger's
writer thread only.
"""

from __future__ import annotations

import json
from typing import Any

from mercury_nb.contract.redaction import redact_data


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


class CheckpointJson:
    """Serializes one task's successive checkpoints (see the module docstring)."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self.secrets = secrets
        self.memo = RecentRedactions()
        self._messages: dict[int, tuple[Any, str]] = {}
        """id(message) -> (the message, kept alive so its id stays its own; its JSON)."""
        self._entries: dict[int, str] = {}
        """A tool-log entry's seq -> its JSON."""

    def _piece(self, item: Any) -> str:
        return json.dumps(redact_data(item, self.secrets))

    def dumps(self, data: dict[str, Any]) -> str:
        """``data`` (a checkpoint) as redacted JSON, ASCII only."""
        rest = {k: v for k, v in data.items() if k not in ("messages", "tool_log")}
        messages: dict[int, tuple[Any, str]] = {}
        message_parts = []
        for message in data.get("messages") or ():
            known = messages.get(id(message)) or self._messages.get(id(message))
            if known is None or known[0] is not message:
                known = (message, self._piece(message))
            messages[id(message)] = known
            message_parts.append(known[1])
        entries: dict[int, str] = {}
        entry_parts = []
        for entry in data.get("tool_log") or ():
            seq = entry.get("seq") if isinstance(entry, dict) else None
            if not isinstance(seq, int):
                entry_parts.append(self._piece(entry))
                continue
            piece = entries.get(seq) or self._entries.get(seq) or self._piece(entry)
            entries[seq] = piece
            entry_parts.append(piece)
        self._messages, self._entries = messages, entries
        head = json.dumps(self.memo.redact(rest, self.secrets))
        parts = [head[1:-1]] if len(head) > 2 else []
        parts.append('"messages": [' + ", ".join(message_parts) + "]")
        parts.append('"tool_log": [' + ", ".join(entry_parts) + "]")
        return "{" + ", ".join(parts) + "}"
