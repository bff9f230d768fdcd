"""The JupyterLab side panel in real Chromium against a real jupyter lab (scripted models)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

Lab = Any  # tests/browser/conftest.py's Lab: base_url, token, root, home, env, api()
DOCS = Path(__file__).resolve().parents[2] / "docs"
SCRIPTS_DIR = Path(__file__).resolve().parents[1] / "server"
XSS = "<img src=x onerror=window.__pwned=1><script>window.__pwned=2</script>"
XSS_FILE = "<img src=x onerror=window.__pwned=1>.txt"


def open_panel(page: Any) -> Any:
    page.locator('li[data-id="mercury-panel"]').click()
    panel = page.locator(".jp-mercury-panel")
    panel.wait_for()
    return panel


def start_from_prompt(page: Any, text: str, model: str) -> None:
    page.locator(".jp-mercury-model").select_option(model)
    page.locator(".jp-mercury-prompt-text").fill(text)
    page.locator(".jp-mercury-start").click()


def detail(page: Any, status: str, timeout: float = 30_000) -> Any:
    found = page.locator(f'.jp-mercury-detail[data-status="{status}"]')
    found.wait_for(timeout=timeout)
    return found


def shoot(page: Any, name: str) -> None:
    DOCS.mkdir(exist_ok=True)
    page.locator("#mercury-panel").screenshot(path=str(DOCS / name))


def test_panel_opens_from_the_sidebar_and_the_palette(page: Any) -> None:
    panel = open_panel(page)
    assert panel.locator(".jp-mercury-prompt-text").is_visible()
    tab = page.locator('li[data-id="mercury-panel"]')
    tab.click()  # collapse it again
    panel.wait_for(state="hidden")
    page.locator("#jp-main-dock-panel").click()
    page.keyboard.press("Control+Shift+C")  # the command palette lists it
    search = page.locator(".lm-CommandPalette-input")
    search.wait_for()
    search.fill("mercury tasks")
    page.locator(".lm-CommandPalette-item", has_text="Open the mercury tasks panel").click()
    panel.wait_for(state="visible")
    tab.click()
    panel.wait_for(state="hidden")
    page.locator("#jp-main-dock-panel").click()
    page.keyboard.press("Alt+Shift+M")  # and the shortcut opens it
    panel.wait_for(state="visible")


def test_start_from_the_prompt_box_completes_with_a_diff(page: Any) -> None:
    open_panel(page)
    start_from_prompt(page, "Create a passing test.", "scripted/panel-complete")
    view = detail(page, "completed")
    assert view.locator(".jp-mercury-banner").inner_text().startswith("✓ Task complete")
    change = view.locator(".jp-mercury-change").first
    assert change.locator(".jp-mercury-change-path").inner_text() == "test_ok.py"
    change.locator("summary").click()
    assert "+def test_ok():" in change.locator(".jp-mercury-diff").inner_text()
    assert "✓" in view.locator(".jp-mercury-evidence").inner_text()
    shoot(page, "panel-completed.png")


def test_stop_aborts_a_running_task_within_two_seconds(page: Any, lab: Lab) -> None:
    open_panel(page)
    start_from_prompt(page, "Think about it slowly.", "scripted/panel-slow")
    view = detail(page, "running")
    deadline = time.monotonic() + 15
    while not (lab.root / "started.md").exists():  # the first step landed; now it stalls
        assert time.monotonic() < deadline
        time.sleep(0.05)
    page.locator(".jp-mercury-back").click()
    row = page.locator('.jp-mercury-row:has(.jp-mercury-chip[data-status="running"])')
    row.locator(".jp-mercury-pulse").wait_for()
    page.wait_for_function(
        "() => /s silent/.test(document.querySelector('.jp-mercury-row .jp-mercury-pulse')"
        "?.textContent ?? '')", timeout=10_000)
    shoot(page, "panel-running.png")
    row.click()
    view = detail(page, "running")
    pressed = time.monotonic()
    view.locator(".jp-mercury-stop").click()
    stopped = detail(page, "aborted", timeout=2_000)
    assert time.monotonic() - pressed < 2.0
    assert "Stopped" in stopped.locator(".jp-mercury-banner").inner_text()


def test_continue_resumes_a_paused_task(page: Any, lab: Lab) -> None:
    started = lab.api("tasks", {"task": "Write the notes.", "model": "scripted/panel-pause",
                                "max_steps": 1})
    open_panel(page)
    row = page.locator(f'.jp-mercury-row[data-task-id="{started["task_id"]}"]')
    row.locator('.jp-mercury-chip[data-status="paused"]').wait_for()
    row.click()
    view = detail(page, "paused")
    assert "paused" in view.locator(".jp-mercury-banner").inner_text()
    shoot(page, "panel-paused.png")
    view.locator(".jp-mercury-continue").click()
    done = detail(page, "completed")
    assert done.locator(".jp-mercury-change-path").first.inner_text() == "NOTES.md"


def test_a_task_started_by_the_cli_appears_live(page: Any, lab: Lab) -> None:
    open_panel(page)
    page.locator(".jp-mercury-list").wait_for()
    work = lab.root / "cli-work"
    work.mkdir()
    text = "Create a test from the command line."
    env = {**lab.env, "PYTHONPATH": os.pathsep.join([str(SCRIPTS_DIR),
                                                      os.environ.get("PYTHONPATH", "")])}
    cli = subprocess.Popen(
        [sys.executable, str(SCRIPTS_DIR / "panel_scripts.py"), "run", text,
         "--model", "scripted/panel-cli", "--workdir", str(work), "--json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        row = page.locator(".jp-mercury-row", has_text=text)
        row.wait_for(timeout=15_000)  # no reload: the WebSocket brought it
        row.locator('.jp-mercury-chip[data-status="completed"]').wait_for(timeout=30_000)
    finally:
        _out, err = cli.communicate(timeout=60)
    assert cli.returncode == 0, err.decode()[-2000:]


def test_markup_in_task_answer_file_name_and_output_renders_as_text(page: Any) -> None:
    open_panel(page)
    start_from_prompt(page, f"Make trouble {XSS}", "scripted/panel-xss")
    view = detail(page, "completed")
    assert view.locator(".jp-mercury-task-text").inner_text() == f"Make trouble {XSS}"
    assert XSS in view.locator(".jp-mercury-answer").inner_text()
    assert XSS_FILE in view.locator(".jp-mercury-change-path").all_inner_texts()
    view.locator(".jp-mercury-change summary").first.click()
    assert XSS in view.locator(".jp-mercury-diff").first.inner_text()
    assert XSS in view.locator(".jp-mercury-evidence").inner_text()
    page.locator(".jp-mercury-back").click()
    assert XSS in page.locator(".jp-mercury-row", has_text="Make trouble").inner_text()
    assert page.locator("#mercury-panel img, #mercury-panel script").count() == 0
    assert page.evaluate("window.__pwned") is None
