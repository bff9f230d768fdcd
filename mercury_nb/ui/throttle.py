"""Pure render throttle: at most N view updates per second, and no update is ever lost."""

from __future__ import annotations

from dataclasses import dataclass

_EPSILON_S = 1e-9
"""Float slack, so ``5.1 - 5.0`` counts as a full 0.1 s interval."""


@dataclass(frozen=True)
class ThrottleState:
    """When the view last rendered, and whether an update was held back since then.

    ``last_render`` is a monotonic time in seconds (``None``: never rendered). ``pending``
    means an update arrived inside the interval and was skipped, so a flush is owed.
    """

    last_render: float | None = None
    pending: bool = False


def min_interval_s(max_per_s: float) -> float:
    """The shortest gap between two renders for a ceiling of ``max_per_s`` per second."""
    if max_per_s <= 0:
        raise ValueError(f"max_per_s must be positive, got {max_per_s!r}")
    return 1.0 / max_per_s


def throttle(state: ThrottleState, now: float, max_per_s: float) -> tuple[ThrottleState, bool]:
    """An update arrived at ``now``: render it now, or hold it back and owe a flush.

    Renders when nothing was rendered yet or the interval since the last render has passed
    (a clock that went backwards counts as passed, so the view never freezes).
    """
    interval = min_interval_s(max_per_s)
    last = state.last_render
    if last is None or now - last >= interval - _EPSILON_S or now < last:
        return ThrottleState(last_render=now, pending=False), True
    return ThrottleState(last_render=last, pending=True), False


def flush_due_in(state: ThrottleState, now: float, max_per_s: float) -> float | None:
    """Seconds until the owed flush may render (0.0: right away), or ``None`` if none is owed."""
    if not state.pending:
        return None
    if state.last_render is None:
        return 0.0
    remaining = state.last_render + min_interval_s(max_per_s) - now
    return max(0.0, remaining)


def flush(state: ThrottleState, now: float, *, final: bool = False) -> tuple[ThrottleState, bool]:
    """A timer fired or the stream ended: render if an update is owed, or always if ``final``.

    The final flush guarantees the last state is shown however the throttle stood.
    """
    if state.pending or final:
        return ThrottleState(last_render=now, pending=False), True
    return state, False
