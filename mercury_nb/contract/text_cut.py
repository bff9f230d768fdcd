"""The one head-and-tail cutter: a text cut to its head and tail around a marker naming the cut."""

from __future__ import annotations

from collections.abc import Callable

Marker = str | Callable[[int], str]
"""The line put where the middle was: fixed, or made from how many characters were cut."""


def keep_head_and_tail(text: str, keep: int, marker: Marker) -> str:
    """``text`` whole when it has at most ``keep`` characters; else its first ``keep // 2``
    and its last ``keep - keep // 2`` characters, with the marker (``marker(cut)``, ``cut``
    being the characters dropped, when it is a function) on a line of its own between them."""
    if len(text) <= keep:
        return text
    keep = max(0, keep)
    head = keep // 2
    tail = keep - head
    note = marker if isinstance(marker, str) else marker(len(text) - keep)
    return f"{text[:head]}\n{note}\n{text[len(text) - tail:]}"


def fit_head_and_tail(text: str, budget: int, marker: Marker) -> str:
    """``text`` whole when it fits ``budget``; else its head and tail around the marker, the
    three together about ``budget`` characters: the marker's room is what it takes for the
    cut of ``len(text) - budget`` characters, and what is left of the budget is kept."""
    if len(text) <= budget:
        return text
    room = len(marker if isinstance(marker, str) else marker(len(text) - budget))
    return keep_head_and_tail(text, max(0, budget - room), marker)
