"""The model's streamed text as ledger rows: coalesced pieces in, redacted ``text-delta`` rows out.

The recorder's sink merges the pieces that arrive while a batch of progress is open (one
batch per ``stream_record_ms`` while only text comes), so the ledger gets at most one
``text-delta`` row per interval, not one per token. On the writer thread,
:class:`StreamedRows` turns a batch's events into rows: text through the pure
:mod:`~mercury_nb.contract.stream_text` (redacted as a whole, handed out word by word, at
most ``stream_record_chars`` a step), and whatever was held back is written before the next
event that is not text, so the order of the log stays the order of the stream. The rows
serve live watchers (the panel's detail) only: the task's final row drops them
(``Ledger.finish_task``), its answer replaces them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from mercury_nb.agent.events import AgentEventKind
from mercury_nb.contract.stream_text import StreamText, add_text, flush_text

TEXT_KIND: AgentEventKind = "text-delta"

Row = tuple[AgentEventKind, "str | None", "str | None"]  # kind, display text, fields (JSON)


def merge_text(events: list[Row], piece: str) -> None:
    """Queue ``piece`` in a batch's ``events``: joined to the last row when it is text."""
    if events and events[-1][0] == TEXT_KIND:
        kind, text, data = events[-1]
        events[-1] = (kind, (text or "") + piece, data)
    else:
        events.append((TEXT_KIND, piece, None))


class StreamedRows:
    """One task's streamed text on the writer thread (its state is the writer's alone)."""

    def __init__(self, secrets: Sequence[str], max_chars: int,
                 clean: Callable[[str], str]) -> None:
        self._secrets = tuple(secrets)
        self._max_chars = max_chars
        self._clean = clean
        self._state = StreamText()

    def rows(self, events: Sequence[Row]) -> list[Row]:
        """A batch's events as the rows to write (other rows cleaned by ``clean``)."""
        out: list[Row] = []
        for kind, text, data in events:
            if kind == TEXT_KIND:
                self._state, shown = add_text(self._state, text or "", self._secrets,
                                              self._max_chars)
                out.extend(self._text_row(shown))
                continue
            out.extend(self.flush())
            out.append((kind, self._clean(text) if text else None,
                        self._clean(data) if data else None))
        return out

    def flush(self) -> list[Row]:
        """The stream ended: the text held back so far, as a row (none when nothing was)."""
        self._state, rest = flush_text(self._state, self._secrets)
        return self._text_row(rest)

    @staticmethod
    def _text_row(shown: str) -> list[Row]:
        return [(TEXT_KIND, None, json.dumps({"text": shown}))] if shown else []
