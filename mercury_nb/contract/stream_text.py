"""Streamed model text made safe to show live: redacted as a whole, handed out word by word.

The model's text arrives in pieces that can cut a key in two (``sk-ab`` | ``cdef…``), so a
piece is never redacted alone: the text streamed so far is redacted as a whole
(:func:`~mercury_nb.contract.redaction.redact`, the ledger's own), and only what no later
piece can turn into part of a secret is handed out: up to the last whitespace, and not a
word that opens a ``Bearer …`` / ``api_key: …`` / ``NAME=…`` value still to come. The rest
waits for the next piece or the end of the stream (:func:`flush_text`). Pure: no clock, no
I/O; the ledger's recorder and the cell widget both use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from mercury_nb.contract.redaction import displayable, redact

_OPENS_VALUE = re.compile(r"(?i)(?:\bbearer|[=:][\"']?)\s*$")
"""Text that ends where a redaction pattern's value would begin: hold that word back."""


@dataclass(frozen=True)
class StreamText:
    """One step's streamed text: ``raw`` as it came (at most ``max_chars``), ``sent`` the
    redacted text handed out so far, ``capped`` once ``raw`` reached its bound."""

    raw: str = ""
    sent: str = ""
    capped: bool = False


def safe_end(shown: str) -> int:
    """How much of the redacted ``shown`` can be handed out while more may follow."""
    end = max(shown.rfind(" "), shown.rfind("\n"), shown.rfind("\t")) + 1
    while end > 0 and _OPENS_VALUE.search(shown[:end]):
        head = shown[:end].rstrip()
        end = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t")) + 1
    return end


def _handed(state: StreamText, shown: str) -> tuple[StreamText, str]:
    if not shown.startswith(state.sent):  # a mask grew over text already out: wait
        return state, ""
    return StreamText(state.raw, shown, state.capped), shown[len(state.sent):]


def add_text(state: StreamText, piece: str, secrets: Iterable[str], max_chars: int
             ) -> tuple[StreamText, str]:
    """``piece`` arrived: the state after it and the new text that is safe to show now."""
    if state.capped or not piece:
        return state, ""
    raw = (state.raw + piece)[:max_chars]
    state = StreamText(raw, state.sent, len(raw) >= max_chars)
    shown = redact(displayable(raw), tuple(secrets))
    return _handed(state, shown[:safe_end(shown)])


def flush_text(state: StreamText, secrets: Iterable[str]) -> tuple[StreamText, str]:
    """The stream ended (a tool call, the turn's end, a new step): the text still held back,
    and a fresh state for the next stream."""
    if not state.raw:
        return StreamText(), ""
    _, rest = _handed(state, redact(displayable(state.raw), tuple(secrets)))
    return StreamText(), rest
