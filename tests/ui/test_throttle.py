"""Table tests for the pure render throttle: a ceiling on renders, and a flush never lost."""

from __future__ import annotations

import pytest

from mercury_nb.ui.throttle import ThrottleState, flush, flush_due_in, throttle

NEVER = ThrottleState()


@pytest.mark.parametrize(
    ("state", "now", "max_per_s", "expected_state", "render"),
    [
        pytest.param(NEVER, 5.0, 10, ThrottleState(5.0, False), True, id="first-update-renders"),
        pytest.param(ThrottleState(5.0), 5.05, 10, ThrottleState(5.0, True), False,
                     id="inside-interval-held-back-and-owed"),
        pytest.param(ThrottleState(5.0), 5.1, 10, ThrottleState(5.1, False), True,
                     id="exactly-one-interval-later-renders"),
        pytest.param(ThrottleState(5.0, True), 5.3, 10, ThrottleState(5.3, False), True,
                     id="render-after-interval-pays-the-owed-flush"),
        pytest.param(ThrottleState(5.0, True), 5.01, 10, ThrottleState(5.0, True), False,
                     id="still-inside-interval-stays-owed"),
        pytest.param(ThrottleState(5.0), 5.4, 2, ThrottleState(5.0, True), False,
                     id="two-per-second-means-half-second-gap"),
        pytest.param(ThrottleState(5.0), 4.0, 10, ThrottleState(4.0, False), True,
                     id="clock-going-backwards-renders-not-freezes"),
    ],
)
def test_throttle_decides(
    state: ThrottleState, now: float, max_per_s: float, expected_state: ThrottleState,
    render: bool,
) -> None:
    assert throttle(state, now, max_per_s) == (expected_state, render)


@pytest.mark.parametrize(
    ("state", "now", "expected"),
    [
        pytest.param(ThrottleState(5.0, False), 5.02, None, id="nothing-owed-no-flush"),
        pytest.param(ThrottleState(5.0, True), 5.02, pytest.approx(0.08), id="owed-waits-rest"),
        pytest.param(ThrottleState(5.0, True), 5.5, 0.0, id="owed-and-overdue-right-away"),
        pytest.param(ThrottleState(None, True), 1.0, 0.0, id="owed-never-rendered-right-away"),
    ],
)
def test_flush_due_in(state: ThrottleState, now: float, expected: float | None) -> None:
    assert flush_due_in(state, now, 10) == expected


@pytest.mark.parametrize(
    ("state", "final", "expected"),
    [
        pytest.param(ThrottleState(5.0, True), False, (ThrottleState(6.0, False), True),
                     id="timer-flush-renders-owed-update"),
        pytest.param(ThrottleState(5.0, False), False, (ThrottleState(5.0, False), False),
                     id="timer-flush-without-debt-is-quiet"),
        pytest.param(ThrottleState(5.0, False), True, (ThrottleState(6.0, False), True),
                     id="final-flush-always-renders"),
        pytest.param(NEVER, True, (ThrottleState(6.0, False), True),
                     id="final-flush-renders-even-if-never-rendered"),
    ],
)
def test_flush(state: ThrottleState, final: bool, expected: tuple[ThrottleState, bool]) -> None:
    assert flush(state, 6.0, final=final) == expected


@pytest.mark.parametrize(
    "max_per_s", [pytest.param(10, id="10-per-s"), pytest.param(4, id="4-per-s")]
)
def test_fast_stream_renders_at_most_the_ceiling_per_second(max_per_s: int) -> None:
    """1000 updates a second for 3 seconds: renders stay within the ceiling (+1 for the start),
    and a debt is still owed at the end, so the final flush is what shows the last state."""
    state, renders = NEVER, 0
    for i in range(3000):
        state, render = throttle(state, i / 1000, max_per_s)
        renders += render
    assert renders <= 3 * max_per_s + 1
    assert renders >= 3 * max_per_s - 1
    assert state.pending
    assert flush(state, 3.0, final=True)[1]


def test_zero_rate_is_refused() -> None:
    with pytest.raises(ValueError, match="max_per_s"):
        throttle(NEVER, 0.0, 0)
