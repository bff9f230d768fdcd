"""A recorded event's words for people: each kind of the log as a plain line.

``%mercury show`` and the CLI's ``show`` print these lines; the panel's twin is
``labextension/src/events.ts`` (a test runs both on the same events). An event of the loop
says its own line (its class's ``words``, :func:`mercury_nb.agent.events.line_of_kind`); the
ledger's own kinds (a continue, a stop request, a recovery) say theirs here. ``None``: not a
line of the log for people.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from mercury_nb.agent.event_lines import chain_words, text_of
from mercury_nb.agent.events import AGENT_EVENT_KINDS, line_of_kind
from mercury_nb.contract.untrusted import one_line
from mercury_nb.ledger.records import LedgerKind, RecordedKind

KINDS: frozenset[str] = frozenset(AGENT_EVENT_KINDS) | frozenset(get_args(LedgerKind))


def words_for(kind: RecordedKind, data: Mapping[str, Any]) -> str | None:
    """The line for one event of ``kind`` with its recorded ``data`` (see the module)."""
    match kind:
        case "resume":
            return f"continued with {chain_words(data)}"
        case "stop-requested":
            return "Stop requested"
        case "recovery":
            return text_of(data, "text") or "its process had ended: paused"
        case _:
            return line_of_kind(kind, data)


def event_words(kind: str, data: Mapping[str, Any]) -> str | None:
    """:func:`words_for` a stored kind (one this version does not know reads as a notice),
    on one line."""
    known: RecordedKind = kind if kind in KINDS else "notice"  # type: ignore[assignment]
    line = words_for(known, data)
    return None if line is None else one_line(line)
