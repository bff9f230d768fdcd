"""The one "count, then pause" policy: the next attempt while the bound allows, else give up."""

from __future__ import annotations

import pytest

from mercury_nb.contract.recovery.bounded import BoundedDecision, GiveUp, Retry, bounded


@pytest.mark.parametrize(
    ("count", "bound", "decision"),
    [
        pytest.param(0, 6, Retry(1, 6), id="the-first-attempt"),
        pytest.param(5, 6, Retry(6, 6), id="the-last-attempt"),
        pytest.param(6, 6, GiveUp(6, 6), id="used-up"),
        pytest.param(7, 6, GiveUp(7, 6), id="over-the-bound"),
        pytest.param(0, 0, GiveUp(0, 0), id="a-bound-of-0-allows-none"),
        pytest.param(0, 1, Retry(1, 1), id="a-bound-of-1-allows-one"),
        pytest.param(1, 1, GiveUp(1, 1), id="and-only-one"),
        pytest.param(-1, 2, Retry(1, 2), id="a-negative-count-is-none"),
        pytest.param(0, -3, GiveUp(0, 0), id="a-negative-bound-is-none"),
    ],
)
def test_bounded(count: int, bound: int, decision: BoundedDecision) -> None:
    assert bounded(count, bound) == decision
