"""Approvals from the panel in Chromium: a task in ``edits`` mode asks before its command;
the panel shows the exact command with Allow once / Always allow / Deny on the task, and a
badge on its list row, and the answer it posts decides whether the command runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from conftest import running_lab
from test_panel import detail, open_panel, shoot, start_from_prompt

Lab = Any  # tests/browser/conftest.py's Lab: base_url, token, root, home, env, api()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A lab whose tasks run in the default ``edits`` mode: commands ask."""
    with running_lab(tmp_path_factory.mktemp("edits-lab"), permissions="edits") as started:
        yield started


@pytest.fixture(autouse=True)
def _stop_what_still_asks(lab: Lab) -> Iterator[None]:
    """A test that fails while its task waits for an answer must not hold the workspace."""
    yield
    for task in lab.api("tasks?status=running")["tasks"]:
        lab.api(f"tasks/{task['id']}/stop", {})


def words(text: str) -> str:
    return " ".join(text.split())


def asked(page: Any) -> Any:
    """The running task's detail once its approval box shows."""
    view = detail(page, "running")
    view.locator(".jp-mercury-approval").wait_for()
    return view


LAUNCHER_FOCUSED = """() => {
  const launcher = document.querySelector('#jp-main-dock-panel .jp-Launcher');
  return launcher !== null && launcher.contains(document.activeElement);
}"""


def focus_settled(page: Any) -> None:
    """Wait until JupyterLab's Launcher (this lab's main area holds only it) has taken the
    focus, as it does once after each page load, when the file browser has restored. A
    button focused before then loses the focus to it, and a key press goes to the Launcher
    (a CI run failed so: the Enter of "Allow once" never reached the panel)."""
    page.wait_for_function(LAUNCHER_FOCUSED)


def badge_on_the_row(page: Any, task_id: str) -> str:
    """Back to the list: the task's row badge text; then into its detail again."""
    page.locator(".jp-mercury-back").click()
    row = page.locator(f'.jp-mercury-row[data-task-id="{task_id}"]')
    badge = row.locator(".jp-mercury-approval-badge")
    badge.wait_for()
    text = str(badge.inner_text())
    row.click()
    return text


def test_allow_once_from_the_panel_runs_the_command_and_the_task_completes(
    page: Any, lab: Lab
) -> None:
    focus_settled(page)
    open_panel(page)
    start_from_prompt(page, "Add a test and run it.", "scripted/panel-approve-once")
    view = asked(page)
    command = view.locator(".jp-mercury-approval-what").inner_text()
    assert command.endswith("-m pytest -q -p no:cacheprovider test_approved.py")
    buttons = view.locator(".jp-mercury-approval-buttons button")
    assert [words(text) for text in buttons.all_inner_texts()] == [
        "Allow once", f"Always allow {command}", "Deny"]
    task_id = view.get_attribute("data-task-id")
    assert badge_on_the_row(page, task_id) == "approval needed"
    once = asked(page).locator(".jp-mercury-allow-once")
    assert once.get_attribute("aria-label") == f"Allow once: {command}"
    once.focus()
    page.keyboard.press("Enter")  # focusable and pressed from the keyboard
    done = detail(page, "completed")
    assert done.locator(".jp-mercury-approval").count() == 0
    evidence = done.locator(".jp-mercury-evidence").inner_text()
    assert "test_approved.py" in evidence and "✓" in evidence
    found = lab.api(f"tasks/{task_id}")
    answers = [e["data"]["answer"] for e in found["events"]
               if e["kind"] == "permission-answered"]
    assert answers == ["allow-once"]


def test_deny_from_the_panel_keeps_the_command_from_running(page: Any, lab: Lab) -> None:
    open_panel(page)
    start_from_prompt(page, "Add a test and run it.", "scripted/panel-approve-deny")
    view = asked(page)
    command = view.locator(".jp-mercury-approval-what").inner_text()
    task_id = view.get_attribute("data-task-id")
    view.locator(".jp-mercury-deny").click()
    events = view.locator(".jp-mercury-events")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-mercury-events li')]"
        ".some(li => li.textContent.includes('denied:'))", timeout=15_000)
    denial = [line for line in events.inner_text().splitlines() if "denied:" in line]
    assert denial and command in denial[0] and "the user denied it" in denial[0]
    found = lab.api(f"tasks/{task_id}")
    assert all(e["exit_code"] is None for e in found["evidence"])  # it never ran
    assert not (Path(lab.root) / ".pytest_cache").exists()
    lab.api(f"tasks/{task_id}/stop", {})
    detail(page, "aborted")


def test_the_pending_approval_screenshot(page: Any, lab: Lab) -> None:
    focus_settled(page)
    open_panel(page)
    start_from_prompt(page, "Add a test and run it.", "scripted/panel-approve-shot")
    view = asked(page)
    task_id = view.get_attribute("data-task-id")
    page.locator(".jp-mercury-back").click()
    page.locator(f'.jp-mercury-row[data-task-id="{task_id}"] .jp-mercury-approval-badge'
                 ).wait_for()
    shoot(page, "panel-approval-row.png")
    page.locator(f'.jp-mercury-row[data-task-id="{task_id}"]').click()
    asked(page).locator(".jp-mercury-allow-once").focus()
    shoot(page, "panel-approval.png")
    asked(page).locator(".jp-mercury-allow-once").click()
    detail(page, "completed")


RECORD_STATUSES = """() => {
  window.__shownStatuses = [];
  new MutationObserver(() => {
    const shown = document.querySelector('.jp-mercury-detail');
    window.__shownStatuses.push(shown ? shown.dataset.status : null);
  }).observe(document.querySelector('.jp-mercury-panel'),
             {subtree: true, childList: true, attributes: true});
}"""
TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def test_a_detail_reply_that_comes_late_does_not_bring_back_the_question(
    page: Any, lab: Lab
) -> None:
    """Detail fetches answer out of order under load: a reply sent while the task waited
    for its approval, arriving after the task completed, must not put the panel back to
    "running" with the question (no later event would ever correct it)."""
    open_panel(page)
    start_from_prompt(page, "Add a test and run it.", "scripted/panel-approve-late")
    view = asked(page)
    task_id = view.get_attribute("data-task-id")
    request = int(view.locator(".jp-mercury-approval").get_attribute("data-request"))
    stale = lab.api(f"tasks/{task_id}")  # the snapshot a slow reply would carry
    assert stale["task"]["status"] == "running" and stale["task"]["live"]["approval"]

    def is_detail(url: str) -> bool:
        return urlsplit(url).path.endswith(f"/mercury/api/tasks/{task_id}")

    held: list[Any] = []
    page.route(is_detail, lambda route: held.append(route) if not held else route.continue_())
    page.locator(".jp-mercury-back").click()
    with page.expect_request(lambda sent: is_detail(sent.url)):
        page.locator(f'.jp-mercury-row[data-task-id="{task_id}"]').click()
    lab.api(f"tasks/{task_id}/approval", {"request": request, "answer": "once"})
    detail(page, "completed")  # from the replies that came after the held one
    page.evaluate(RECORD_STATUSES)
    assert len(held) == 1
    with page.expect_request_finished(lambda done: is_detail(done.url)):
        held[0].fulfill(status=200, content_type="application/json", body=json.dumps(stale))
    page.evaluate(TWO_FRAMES)
    shown = page.evaluate("() => window.__shownStatuses")
    assert "running" not in shown
    done = detail(page, "completed", timeout=1_000)
    assert done.locator(".jp-mercury-approval").count() == 0
