"""A fake ``later`` for the views: timers that run only when a test fires them."""

from __future__ import annotations

from collections.abc import Callable


class FakeTimer:
    """One scheduled call: its delay, and whether it was cancelled or fired."""

    def __init__(self, delay: float, callback: Callable[[], None]) -> None:
        self.delay = delay
        self.callback = callback
        self.cancelled = False
        self.fired = False

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        """Run the callback now, as the loop would when it is due (no real waiting)."""
        assert not (self.cancelled or self.fired), "a cancelled or fired timer never runs"
        self.fired = True
        self.callback()


class FakeLater:
    """Passed as a view's ``later``: keeps every timer it was asked for."""

    def __init__(self) -> None:
        self.timers: list[FakeTimer] = []

    def __call__(self, delay: float, callback: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer(delay, callback)
        self.timers.append(timer)
        return timer

    def pending(self, delay: float | None = None) -> list[FakeTimer]:
        """The timers neither cancelled nor fired (of that delay, if given)."""
        return [timer for timer in self.timers if not (timer.cancelled or timer.fired)
                and (delay is None or timer.delay == delay)]
