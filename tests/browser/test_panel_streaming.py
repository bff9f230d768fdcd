"""The model's text streams into the panel's detail while the task runs (real Chromium)."""

from __future__ import annotations

from typing import Any

from panel_scripts import STREAM_GATE, STREAMED
from test_panel import detail, open_panel, shoot, start_from_prompt

Lab = Any  # tests/browser/conftest.py's Lab


def test_streaming_text_appears_in_the_panel_before_the_task_ends(page: Any, lab: Lab) -> None:
    open_panel(page)
    start_from_prompt(page, "Summarize the notes.", "scripted/panel-stream")
    view = detail(page, "running")
    live = view.locator(".jp-mercury-live-text")
    # the model is held mid-reply (until the gate file exists): what shows now came live
    page.wait_for_function(
        "() => /Reading the notes/.test(document.querySelector("
        "'.jp-mercury-detail[data-status=\"running\"] .jp-mercury-live-text')?.textContent"
        " ?? '')", timeout=20_000)
    assert view.get_attribute("data-status") == "running"
    shown = live.inner_text()
    assert "Reading the notes" in shown and "all three items" not in shown
    # one step count: the status line says it, the header does not say another
    assert view.locator(".jp-mercury-pulse").inner_text().startswith("step 1")
    assert "step" not in view.locator(".jp-mercury-meta").inner_text()
    # the streamed text is not an event line, and no line names an internal kind
    events = view.locator(".jp-mercury-events").inner_text()
    assert "text-delta" not in events and "task-started" not in events
    assert view.locator('.jp-mercury-events li[data-kind="text-delta"]').count() == 0
    shoot(page, "panel-streaming.png")

    (lab.home / STREAM_GATE).touch()  # let the model finish its reply
    done = detail(page, "completed")
    assert done.locator(".jp-mercury-live-text").count() == 0  # the answer replaced it
    assert done.locator(".jp-mercury-answer").inner_text().strip() == STREAMED.strip()
    assert "1 step" in done.locator(".jp-mercury-meta").inner_text()
    # a scripted model reports no usage: nothing to say about it
    assert "no token usage recorded" not in done.inner_text()
    assert "started with scripted/panel-stream" in done.locator(".jp-mercury-events").inner_text()
