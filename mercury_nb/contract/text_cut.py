"""The one head-and-tail cutter: a text cut to its head and tail around a marker naming the cut,
redacted before it is cut, so a secret that straddles the cut never keeps a piece of itself.

Redacting a whole text first is not always possible (a command's output is a stream of any
length) nor cheap (a 2 GB line), so the cutter redacts *windows*: the head it keeps plus
:data:`CUT_REACH` characters after it, and the tail plus as many before it. Any secret up to
that long which crosses the cut lies whole in a window, is masked there, and only then is the
window cut. Every cutter here (and :func:`clip` for head-only cuts) does this.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from mercury_nb.contract.redaction import redact

Marker = str | Callable[[int], str]
"""The line put where the middle was: fixed, or made from how many characters were cut."""

CUT_REACH = 512
"""How far past each edge of a cut the text is read for redaction: a secret (or its
``NAME=`` / ``Bearer`` context) up to this long that crosses the cut is masked whole."""


def cut_edges(
    head_window: str, tail_window: str, head: int, tail: int, secrets: Iterable[str] = ()
) -> tuple[str, str]:
    """The kept head and tail of a text whose first ``head + CUT_REACH`` characters are
    ``head_window`` and last ``tail + CUT_REACH`` are ``tail_window`` (either may be shorter):
    each window redacted (patterns and ``secrets``), then cut to ``head`` / ``tail``."""
    kept_secrets = tuple(secrets)
    head_text = redact(head_window, kept_secrets)[: max(0, head)] if head > 0 else ""
    tail_text = redact(tail_window, kept_secrets)[-tail:] if tail > 0 else ""
    return head_text, tail_text


def keep_head_and_tail(
    text: str, keep: int, marker: Marker, secrets: Iterable[str] = ()
) -> str:
    """``text`` whole when it has at most ``keep`` characters; else its first ``keep // 2``
    and its last ``keep - keep // 2`` characters, with the marker (``marker(cut)``, ``cut``
    being the characters dropped, when it is a function) on a line of its own between them.
    A cut text is redacted (key-shaped tokens and ``secrets``) before it is cut."""
    if len(text) <= keep:
        return text
    keep = max(0, keep)
    head = keep // 2
    tail = keep - head
    note = marker if isinstance(marker, str) else marker(len(text) - keep)
    head_text, tail_text = cut_edges(
        text[: head + CUT_REACH], text[max(0, len(text) - tail - CUT_REACH):], head, tail,
        secrets)
    return f"{head_text}\n{note}\n{tail_text}"


def fit_head_and_tail(
    text: str, budget: int, marker: Marker, secrets: Iterable[str] = ()
) -> str:
    """``text`` whole when it fits ``budget``; else its head and tail around the marker, the
    three together about ``budget`` characters: the marker's room is what it takes for the
    cut of ``len(text) - budget`` characters, and what is left of the budget is kept."""
    if len(text) <= budget:
        return text
    room = len(marker if isinstance(marker, str) else marker(len(text) - budget))
    return keep_head_and_tail(text, max(0, budget - room), marker, secrets)


def clip(text: str, limit: int, secrets: Iterable[str] = (), mark: str = "…") -> str:
    """``text`` whole when it has at most ``limit`` characters; else its first ``limit - 1``
    and ``mark``, redacted before the cut (a secret crossing the end is masked whole)."""
    if len(text) <= limit:
        return text
    head, _ = cut_edges(text[: limit + CUT_REACH], "", max(0, limit - len(mark)), 0, secrets)
    return head + mark
