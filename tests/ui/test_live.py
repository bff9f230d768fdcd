"""The live-view seam: widget-or-text choice and the throttled renderer's owed flush."""

from __future__ import annotations

import asyncio

import pytest
from ui_timers import FakeLater

from mercury_nb.ui.live import ThrottledRenderer, view_kind


@pytest.mark.parametrize(
    ("shell_class", "has_kernel", "environ", "kind"),
    [
        pytest.param("ZMQInteractiveShell", True, {}, "widget", id="kernel-gets-widgets"),
        pytest.param("ZMQInteractiveShell", True, {"MERCURY_PLAIN": "1"}, "plain",
                     id="mercury-plain-forces-text"),
        pytest.param("ZMQInteractiveShell", True, {"MERCURY_PLAIN": "true"}, "plain",
                     id="mercury-plain-true-forces-text"),
        pytest.param("ZMQInteractiveShell", True, {"MERCURY_PLAIN": "0"}, "widget",
                     id="mercury-plain-0-keeps-widgets"),
        pytest.param("TerminalInteractiveShell", False, {}, "plain", id="terminal-gets-text"),
        pytest.param("TerminalInteractiveShell", True, {}, "plain",
                     id="terminal-with-odd-kernel-attr-gets-text"),
        pytest.param("InteractiveShell", False, {}, "plain", id="bare-shell-gets-text"),
    ],
)
def test_view_kind(shell_class: str, has_kernel: bool, environ: dict[str, str], kind: str) -> None:
    assert view_kind(shell_class=shell_class, has_kernel=has_kernel, environ=environ) == kind


async def test_held_back_update_is_flushed_by_a_timer_on_the_loop() -> None:
    frozen = 10.0
    rendered: list[float] = []
    flushed = asyncio.Event()

    def render(now: float) -> None:
        rendered.append(now)
        if len(rendered) == 2:
            flushed.set()

    renderer = ThrottledRenderer(render, max_per_s=10, clock=lambda: frozen)
    renderer.request()
    renderer.request()  # inside the interval: held back, owed
    renderer.request()  # still one owed flush, not two
    assert rendered == [10.0]
    await asyncio.wait_for(flushed.wait(), timeout=5)
    assert rendered == [10.0, 10.0]
    renderer.cancel()


def test_final_render_cancels_the_pending_timer() -> None:
    rendered: list[float] = []
    later = FakeLater()
    renderer = ThrottledRenderer(rendered.append, max_per_s=10, clock=lambda: 1.0, later=later)
    renderer.request()
    renderer.request()
    (owed,) = later.pending()  # the held-back update armed one flush
    renderer.final()
    assert rendered == [1.0, 1.0]
    assert owed.cancelled and later.pending() == []  # nothing renders after the final one


def test_without_a_loop_the_owed_update_waits_for_the_final_render() -> None:
    rendered: list[float] = []
    renderer = ThrottledRenderer(rendered.append, max_per_s=10, clock=lambda: 1.0)
    renderer.request()
    renderer.request()
    assert rendered == [1.0]
    renderer.final()
    assert rendered == [1.0, 1.0]
