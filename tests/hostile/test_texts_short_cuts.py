"""Hostile texts, short cuts: the one-line excerpts (a change preview, a provider's error, a
tool call's summary, a task's excerpt, a listing's first line) are redacted before they are
cut, so a key across the cut is masked whole instead of keeping its first characters."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from mercury_nb.agent.prompts import summarize_arguments
from mercury_nb.contract.shared_workspace import TASK_EXCERPT_CHARS, task_excerpt
from mercury_nb.ledger.listing import first_line
from mercury_nb.transport.provider_errors import truncate
from mercury_nb.workspace.changes import PREVIEW_LINE_CHARS, describe_change
from mercury_nb.workspace.file_state import state_from_bytes

KEY = "sk-Zq9XwYvUtS8rQpOnMlK7jIhGfEdCbA6zyxwvut"


def _at(cut: int, at: int) -> str:
    """Filler, then the key starting ``at`` characters before the cut at ``cut``."""
    return "x" * (cut - at - 1) + " " + KEY + " tail"


def _preview(at: int) -> str:
    before = state_from_bytes(b"", keep_text=True)
    # "+" starts the added line in the preview: one character before the text
    after = state_from_bytes(_at(PREVIEW_LINE_CHARS - 1, at).encode(), keep_text=True)
    change = describe_change("notes.txt", before, after)
    assert change is not None
    return change.preview


PLACES: dict[str, tuple[Callable[[int], str], int]] = {
    "change preview": (_preview, PREVIEW_LINE_CHARS),
    "provider error": (lambda at: truncate(_at(100, at), 100), 100),
    "tool call summary": (
        lambda at: summarize_arguments("run_command", json.dumps({"command": _at(80, at)})), 80),
    "task excerpt": (lambda at: task_excerpt(_at(TASK_EXCERPT_CHARS, at)), TASK_EXCERPT_CHARS),
    "listing first line": (lambda at: first_line(_at(60, at), 60), 60),
}


@pytest.mark.parametrize("at", [4, 7, 12])
@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_key_across_a_short_cut_is_masked_whole(place: str, at: int) -> None:
    make, limit = PLACES[place]
    shown = make(at)
    assert shown.endswith("…") and len(shown) <= limit + len("run_command: "), shown
    body = KEY.removeprefix("sk-")
    leaked = [body[i:i + 3] for i in range(len(body) - 2) if body[i:i + 3] in shown]
    assert not leaked, f"{place}: {leaked} in {shown!r}"
