"""The JupyterLab side panel in real Chromium against a real jupyter lab (scripted models)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from panel_scripts import PAGING_TASKS, QUESTION

from mercury_nb.contract.untrusted import shown_name

Lab = Any  # tests/browser/conftest.py's Lab: base_url, token, root, home, env, api()
DOCS = Path(__file__).resolve().parents[2] / "docs"
SCRIPTS_DIR = Path(__file__).resolve().parents[1] / "server"
SHOTS = Path(tempfile.gettempdir()) / "mercury-panel-screenshots"
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


def is_start(request: Any) -> bool:
    """The panel's POST /mercury/api/tasks (JupyterLab adds a cache-busting query)."""
    return bool(request.method == "POST"
                and urlsplit(request.url).path.endswith("/mercury/api/tasks"))


def rows(page: Any) -> Any:
    return page.locator(".jp-mercury-list .jp-mercury-row")


def shown_ids(page: Any) -> list[str]:
    return list(rows(page).evaluate_all("rows => rows.map(row => row.dataset.taskId)"))


def wait_ids(page: Any, expected: list[str]) -> None:
    """Wait until the list shows exactly ``expected``, in order: a list opened while tasks
    were changing catches up through the refresh their last events scheduled."""
    page.wait_for_function(
        "ids => JSON.stringify([...document.querySelectorAll('.jp-mercury-list "
        ".jp-mercury-row')].map(row => row.dataset.taskId)) === JSON.stringify(ids)",
        arg=expected)


def load_more(page: Any) -> None:
    """Click "Load more"; return once the list shows what that page's reply made of it."""
    offset = str(rows(page).count())

    def is_next_page(response: Any) -> bool:
        url = urlsplit(response.url)
        return (url.path.endswith("/mercury/api/tasks")
                and parse_qs(url.query).get("offset") == [offset])

    with page.expect_response(is_next_page):
        page.locator(".jp-mercury-more").click()
    page.locator('.jp-mercury-list[aria-busy="false"]').wait_for()


def show(page: Any, status: str) -> Any:
    """Pick ``status`` in the list's filter; the list once its rows are that filter's."""
    page.locator(".jp-mercury-filter").select_option(status)
    shown = page.locator(f'.jp-mercury-list[data-filter="{status}"][aria-busy="false"]')
    shown.wait_for()
    return shown


def shoot(page: Any, name: str) -> None:
    """Screenshot the panel; into docs/ with MERCURY_UPDATE_SCREENSHOTS=1 (so a plain test
    run leaves the tracked images alone), else next to the lab's temporary files."""
    folder = DOCS if os.environ.get("MERCURY_UPDATE_SCREENSHOTS") == "1" else SHOTS
    folder.mkdir(exist_ok=True)
    page.locator("#mercury-panel").screenshot(path=str(folder / name))


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
    with page.expect_request(is_start) as sent:
        start_from_prompt(page, "Create a passing test.", "scripted/panel-complete")
    assert "max_steps" not in sent.value.post_data_json  # empty field: the default budget
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
        "() => /waiting for the model · \\d+ s/.test(document.querySelector("
        "'.jp-mercury-row .jp-mercury-pulse')"
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


def test_a_sub_agent_is_shown_under_its_parent_and_links_both_ways(page: Any,
                                                                    lab: Lab) -> None:
    started = lab.api("tasks", {"task": "What does a helper find in this folder?",
                                "model": "scripted/panel-delegate"})
    parent_id = started["task_id"]
    open_panel(page)
    sub_row = page.locator(f'.jp-mercury-row[data-task-id="{parent_id}.1"]')
    sub_row.locator('.jp-mercury-chip[data-status="completed"]').wait_for(timeout=30_000)
    assert sub_row.locator(".jp-mercury-parent").inner_text() == f"↳ sub-agent of {parent_id}"
    shoot(page, "panel-subagent-row.png")
    page.locator(f'.jp-mercury-row[data-task-id="{parent_id}"]').click()
    view = detail(page, "completed")
    listed = view.locator(f'.jp-mercury-subagents li[data-task-id="{parent_id}.1"]')
    assert "Which files are in this folder?" in listed.inner_text()
    shoot(page, "panel-subagents.png")
    listed.locator(".jp-mercury-open-sub").click()
    sub = page.locator(f'.jp-mercury-detail[data-task-id="{parent_id}.1"]')
    sub.wait_for()
    assert sub.locator(".jp-mercury-answer").inner_text() == "There are no files in this folder."
    sub.locator(".jp-mercury-open-parent").click()
    page.locator(f'.jp-mercury-detail[data-task-id="{parent_id}"]').wait_for()


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
    start_from_prompt(page, f"Write a note about trouble {XSS}", "scripted/panel-xss")
    view = detail(page, "completed")
    assert view.locator(".jp-mercury-task-text").inner_text() == f"Write a note about trouble {XSS}"
    assert XSS in view.locator(".jp-mercury-answer").inner_text()
    # shown quoted (it starts with "<", so it could pass for other words), never as markup
    assert shown_name(XSS_FILE) in view.locator(".jp-mercury-change-path").all_inner_texts()
    view.locator(".jp-mercury-change summary").first.click()
    assert XSS in view.locator(".jp-mercury-diff").first.inner_text()
    assert XSS in view.locator(".jp-mercury-evidence").inner_text()
    page.locator(".jp-mercury-back").click()
    row = page.locator(".jp-mercury-row", has_text="Write a note about trouble")
    assert XSS in row.inner_text()
    assert page.locator("#mercury-panel img, #mercury-panel script").count() == 0
    assert page.evaluate("window.__pwned") is None


def open_in_editor(page: Any, lab: Lab, name: str) -> Any:
    page.goto(f"{lab.base_url}lab/tree/{name}?reset&token={lab.token}")
    editor = page.locator(".jp-FileEditor .cm-content")
    editor.wait_for()
    return editor


def wait_finished(lab: Lab, task_id: str, timeout_s: float = 30) -> dict[str, Any]:
    """The task's detail once it is no longer running (polled, at most ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while True:
        found: dict[str, Any] = lab.api(f"tasks/{task_id}")
        if found["task"]["status"] != "running":
            return found
        assert time.monotonic() < deadline, "task still running"
        time.sleep(0.1)


def wait_none_running(lab: Lab) -> None:
    deadline = time.monotonic() + 30
    while lab.api("tasks?status=running")["tasks"]:
        assert time.monotonic() < deadline, "a task is still running"
        time.sleep(0.1)


def start_paused(lab: Lab, text: str, model: str, workdir: str) -> str:
    """A ``pausing`` script started with max_steps 1 in a new folder; once it paused."""
    (lab.root / workdir).mkdir()
    task_id = str(lab.api("tasks", {"task": text, "model": model, "max_steps": 1,
                                    "workdir": workdir})["task_id"])
    assert wait_finished(lab, task_id)["task"]["status"] == "paused"
    return task_id


def test_the_status_filter_lists_only_its_tasks_and_follows_changes_live(page: Any,
                                                                         lab: Lab) -> None:
    wait_none_running(lab)
    # content tasks: the read-back of NOTES.md answers them (an "empty" task text would not)
    first = start_paused(lab, "Write NOTES.md (filter me first).", "scripted/panel-filter-a",
                         "filter-a")
    second = start_paused(lab, "Write NOTES.md (filter me second).", "scripted/panel-filter-b",
                          "filter-b")
    open_panel(page)
    show(page, "running")
    assert page.locator(".jp-mercury-empty").inner_text() == "No running tasks."
    assert rows(page).count() == 0
    shoot(page, "panel-filter-empty.png")
    show(page, "paused")
    assert {first, second} <= set(shown_ids(page))
    assert set(rows(page).locator(".jp-mercury-chip").all_inner_texts()) == {"paused"}
    shoot(page, "panel-filter-paused.png")
    lab.api(f"tasks/{first}/continue", {})
    page.locator(f'.jp-mercury-row[data-task-id="{first}"]').wait_for(state="detached")
    assert second in shown_ids(page)  # it left the paused list, live; the other stayed
    show(page, "completed")
    done = '.jp-mercury-row[data-task-id="{}"] .jp-mercury-chip[data-status="completed"]'
    assert page.locator(done.format(first)).count() == 1
    assert second not in shown_ids(page)
    lab.api(f"tasks/{second}/continue", {})
    page.locator(done.format(second)).wait_for()  # it entered the completed list, live
    assert set(rows(page).locator(".jp-mercury-chip").all_inner_texts()) == {"completed"}
    page.locator(f'.jp-mercury-row[data-task-id="{second}"]').click()
    detail(page, "completed")
    page.locator(".jp-mercury-back").click()
    page.locator('.jp-mercury-list[data-filter="completed"]').wait_for()  # kept
    assert page.locator(".jp-mercury-filter").input_value() == "completed"
    show(page, "all")
    assert {first, second} <= set(shown_ids(page))


def test_load_more_appends_the_next_pages_whose_rows_stay_live(page: Any, lab: Lab) -> None:
    size = lab.page_size
    held = start_paused(lab, "Write NOTES.md and wait on a later page.",
                        "scripted/panel-page-pause", "paging")
    started = []
    for n in range(PAGING_TASKS):  # each in its own folder: all run at once
        (lab.root / f"paging-{n}").mkdir()
        started.append(lab.api("tasks", {"task": f"Look around {n}.", "workdir": f"paging-{n}",
                                         "model": "scripted/panel-page"})["task_id"])
    for task_id in started:
        assert wait_finished(lab, task_id)["task"]["status"] == "completed"
    wait_none_running(lab)
    everything = [task["id"] for task in lab.api("tasks?limit=200")["tasks"]]
    assert len(everything) > 2 * size and everything.index(held) >= 2 * size
    open_panel(page)
    wait_ids(page, everything[:size])
    more = page.locator(".jp-mercury-more")
    assert more.inner_text() == "Load more"
    assert page.locator(".jp-mercury-count").inner_text() == f"{size} shown"
    load_more(page)
    assert shown_ids(page) == everything[:2 * size]  # appended, in order, no repeats
    shoot(page, "panel-load-more.png")
    while more.is_visible():
        load_more(page)
    assert shown_ids(page) == everything
    lab.api(f"tasks/{held}/continue", {})  # a row from the third page changes, live
    page.locator(f'.jp-mercury-row[data-task-id="{held}"] '
                 '.jp-mercury-chip[data-status="completed"]').wait_for()
    assert shown_ids(page) == [held] + [task for task in everything if task != held]
    assert not more.is_visible()


def test_max_steps_from_the_prompt_box_is_checked_then_sent(page: Any) -> None:
    open_panel(page)
    starts: list[Any] = []
    page.on("request", lambda request: starts.append(request) if is_start(request) else None)
    page.locator(".jp-mercury-model").select_option("scripted/panel-steps")
    page.locator(".jp-mercury-prompt-text").fill("Write the notes in one step.")
    steps = page.locator(".jp-mercury-max-steps")
    start = page.locator(".jp-mercury-start")
    problem = page.locator(".jp-mercury-steps-error")
    for bad in ("0", "1001", "2.5", "-3", "ten"):
        steps.fill(bad)
        assert "whole number from 1 to 1000" in problem.inner_text(), bad
        assert start.is_disabled()
        steps.press("Enter")  # refused from the keyboard too
        page.locator(".jp-mercury-prompt-text").press("Control+Enter")
    shoot(page, "panel-max-steps-invalid.png")
    steps.fill(" 1 ")
    problem.wait_for(state="detached")
    with page.expect_request(is_start) as sent:
        start.click()
    view = detail(page, "paused")  # the pausing script pauses after its one step
    assert "paused" in view.locator(".jp-mercury-banner").inner_text()
    assert sent.value.post_data_json["max_steps"] == 1
    assert starts == [sent.value]  # none of the invalid budgets was ever sent


def test_an_open_document_changed_by_a_task_is_reloaded_when_clean(page: Any, lab: Lab) -> None:
    (lab.root / "clean.md").write_text("# before\n")
    editor = open_in_editor(page, lab, "clean.md")
    page.wait_for_function("() => document.querySelector('.jp-FileEditor .cm-content')"
                           "?.textContent.includes('before')")
    started = lab.api("tasks", {"task": "Rewrite clean.md.",
                                "model": "scripted/panel-reload-clean"})
    assert wait_finished(lab, started["task_id"])["task"]["status"] == "completed"
    page.wait_for_function("() => document.querySelector('.jp-FileEditor .cm-content')"
                           "?.textContent.includes('from the task')", timeout=10_000)
    assert "before" not in editor.inner_text()


def test_an_open_document_with_unsaved_edits_asks_before_reloading(page: Any, lab: Lab) -> None:
    (lab.root / "dirty.md").write_text("# before\n")
    editor = open_in_editor(page, lab, "dirty.md")
    page.wait_for_function("() => document.querySelector('.jp-FileEditor .cm-content')"
                           "?.textContent.includes('before')")
    editor.click()
    page.keyboard.press("End")
    page.keyboard.type(" my edit")
    started = lab.api("tasks", {"task": "Rewrite dirty.md.",
                                "model": "scripted/panel-reload-dirty"})
    assert wait_finished(lab, started["task_id"])["task"]["status"] == "completed"
    dialog = page.locator(".jp-Dialog", has_text="File changed by a mercury task")
    dialog.wait_for(timeout=10_000)
    assert "my edit" in editor.inner_text()  # nothing overwritten while asking
    dialog.locator("button", has_text="Reload from disk").click()
    page.wait_for_function("() => document.querySelector('.jp-FileEditor .cm-content')"
                           "?.textContent.includes('from the task')", timeout=10_000)
    assert "my edit" not in editor.inner_text()


def test_a_task_no_resume_can_cure_offers_no_continue_while_a_pause_does(page: Any,
                                                                         lab: Lab) -> None:
    wait_none_running(lab)
    for folder in ("no-tools", "asking"):
        (lab.root / folder).mkdir()
    failed = lab.api("tasks", {"task": "Create hello.py that prints hello world, and run it.",
                               "model": "scripted/panel-notools", "workdir": "no-tools"})
    asked = lab.api("tasks", {"task": "Build a todo CLI in todo.py with tests.",
                              "model": "scripted/panel-question", "workdir": "asking"})
    record = wait_finished(lab, failed["task_id"])["task"]
    assert (record["status"], record["resumable"]) == ("failed", False)
    record = wait_finished(lab, asked["task_id"])["task"]
    assert (record["status"], record["resumable"]) == ("paused", True)
    open_panel(page)
    page.locator(f'.jp-mercury-row[data-task-id="{failed["task_id"]}"]').click()
    view = detail(page, "failed")
    banner = view.locator(".jp-mercury-banner").inner_text()
    assert banner.startswith("I can't do this task with scripted/panel-notools: it does not "
                             "take tools")
    assert "choose a model with tool support" in banner
    assert "Resuming this task cannot help" in banner and 'Send "continue"' not in banner
    assert view.locator(".jp-mercury-actions button").count() == 0  # no Continue, no Stop
    shoot(page, "panel-not-resumable.png")
    page.locator(".jp-mercury-back").click()
    page.locator(f'.jp-mercury-row[data-task-id="{asked["task_id"]}"]').click()
    view = detail(page, "paused")
    assert view.locator(".jp-mercury-banner").inner_text().startswith(
        f"I need your answer before I go on: {QUESTION}")
    assert view.locator(".jp-mercury-continue").is_visible()
    shoot(page, "panel-question.png")
