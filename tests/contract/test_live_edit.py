"""Live edits' pure decisions: live or disk by the open record, compare-and-swap by source hash."""

from __future__ import annotations

import pytest

from mercury_nb.contract.live_edit import (
    Apply,
    Disk,
    Gone,
    Live,
    LiveEditLimits,
    Refuse,
    Route,
    Swap,
    live_refusal_text,
    route,
    source_sha,
    swap,
)

ON = LiveEditLimits(live_edit_wait_s=3.0, live_open_fresh_s=10.0)
OFF = LiveEditLimits(live_edit_wait_s=0.0)


@pytest.mark.parametrize(("seen_at", "now", "limits", "expected"), [
    (None, 100.0, ON, Disk("not-open")),
    (100.0, 100.0, ON, Live()),
    (90.0, 100.0, ON, Live()),            # exactly the freshness window: still open
    (89.9, 100.0, ON, Disk("stale")),     # a panel that stopped reporting
    (100.0, 100.0, OFF, Disk("disabled")),
    (None, 100.0, OFF, Disk("disabled")),
])
def test_route(seen_at: float | None, now: float, limits: LiveEditLimits,
               expected: Route) -> None:
    assert route(seen_at, now, limits) == expected


READ = source_sha("x = 1")


@pytest.mark.parametrize(("current", "read_sha", "expected"), [
    ("x = 1", READ, Apply()),
    ("x = 12", READ, Refuse("x = 12")),   # the user typed in it
    ("", READ, Refuse("")),
    (None, READ, Gone()),                 # the cell was deleted
])
def test_swap(current: str | None, read_sha: str, expected: Swap) -> None:
    assert swap(current, read_sha) == expected


@pytest.mark.parametrize(("decision", "expected"), [
    (Apply(), None),
    (Refuse("y = 2"), "refused: cell ab12 changed since you read it; its source now: y = 2"),
    (Gone(), "refused: cell ab12 is no longer in the notebook (read it again)"),
])
def test_refusal_text(decision: Swap, expected: str | None) -> None:
    assert live_refusal_text("ab12", decision) == expected


def test_source_sha_is_sha256_of_utf8() -> None:
    assert source_sha("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert source_sha("é") != source_sha("e")
