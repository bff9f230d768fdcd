"""The panel on a first launch, in real Chromium against a real jupyter lab with no provider
key: a shipped demo preselected and marked, completing a task offline; Stop and Continue on
``scripted/walkthrough`` in a folder picked in the prompt box; a start refused for want of a
key (no task row, the message and a way to the form); the "Connect a model" form against the
loopback server: a model that answers becomes the picked one and runs, a refusal is shown as
the provider wrote it. The module's lab is ``first_lab``: what ``scripts/lab.sh`` starts, with
no test scripts registered."""

from __future__ import annotations

import time
from typing import Any

import pytest
from test_panel import detail, is_start, open_panel, rows, shoot, wait_finished

from mercury_nb.testing import HttpError, LoopbackServer, Turn
from mercury_nb.transport.demo_models import DEMOS

Lab = Any  # tests/browser/conftest.py's Lab: base_url, token, root, home, env, api()
SECRET = "sk-browser-loopback-7d2e"
REFUSAL = "Incorrect API key provided: sk-brow****7d2e (the loopback server, code 7)"


@pytest.fixture(scope="module")
def lab(first_lab: Lab) -> Lab:
    """This module's tests (and ``page``) run on a first launch's lab."""
    return first_lab


def listed_texts(lab: Lab) -> list[str]:
    return [task["task"] for task in lab.api("tasks?limit=200")["tasks"]]


def pick_folder(page: Any, folder: str) -> None:
    page.locator(".jp-mercury-workdir").fill(folder)


def test_a_demo_is_preselected_marked_and_completes_offline(page: Any, lab: Lab) -> None:
    (lab.root / "demo-quick").mkdir()
    panel = open_panel(page)
    picker = page.locator(".jp-mercury-model")
    page.wait_for_function(  # the models arrived: the default has no key, a demo is picked
        "() => document.querySelector('.jp-mercury-model')?.value === 'scripted/quickstart'")
    assert picker.locator("option").all_inner_texts() == [  # all a first launch offers
        "gpt-4o-mini · no key", "scripted/quickstart · demo, offline",
        "scripted/walkthrough · demo, offline", "scripted/sales · demo, offline"]
    titles = picker.locator("option").evaluate_all("os => os.map(o => o.title)")
    assert DEMOS["scripted/walkthrough"].description in titles
    note = page.locator(".jp-mercury-model-note")  # the side bar cuts the option's words
    assert note.inner_text() == DEMOS["scripted/quickstart"].description
    picker.select_option("gpt-4o-mini")
    note.wait_for(state="detached")
    picker.select_option("scripted/quickstart")
    page.locator(".jp-mercury-prompt-text").fill("Write greet(name) in greet.py with a test.")
    pick_folder(page, "demo-quick")
    # the picker opened as a list, for the picture (a headless <select> shows no popup)
    picker.evaluate("s => { s.size = s.options.length; }")
    shoot(page, "panel-demo-picker.png")
    picker.evaluate("s => { s.size = 0; }")
    with page.expect_request(is_start) as sent:
        page.locator(".jp-mercury-start").click()
    assert sent.value.post_data_json["model"] == "scripted/quickstart"
    view = detail(page, "completed", timeout=90_000)
    assert view.locator(".jp-mercury-banner").inner_text().startswith("✓ Task complete")
    paths = view.locator(".jp-mercury-change-path").all_inner_texts()
    assert sorted(paths) == ["greet.py", "test_greet.py"]
    assert "python -m pytest -q" in view.locator(".jp-mercury-evidence").inner_text()
    assert (lab.root / "demo-quick" / "greet.py").read_text().startswith("def greet(name):")
    assert panel.locator(".jp-mercury-start-error").count() == 0


def test_the_folder_picker_shows_the_full_folder_and_the_task_runs_there(page: Any,
                                                                       lab: Lab) -> None:
    for folder in ("walk", "walk/inner"):
        (lab.root / folder).mkdir()
    open_panel(page)
    full = page.locator(".jp-mercury-folder-full")
    root = str(lab.root.resolve())
    page.wait_for_function("r => document.querySelector('.jp-mercury-folder-full')"
                           "?.textContent === r", arg=root)  # the file browser's: the root
    suggested = page.locator("#jp-mercury-folders option")
    (lab.root / "made-later").mkdir()  # after the panel listed the root: offered on focus
    page.locator(".jp-mercury-workdir").focus()  # where the suggestions show, as a user would
    for offered in ("walk", "made-later"):  # the root's folders, as they are now
        page.wait_for_function(
            "f => [...document.querySelectorAll('#jp-mercury-folders option')]"
            ".some(o => o.value === f)", arg=offered)
    pick_folder(page, "walk")
    assert full.inner_text() == f"{root}/walk"
    page.wait_for_function(
        "() => [...document.querySelectorAll('#jp-mercury-folders option')]"
        ".some(o => o.value === 'walk/inner')")  # and then the picked folder's
    assert "walk/inner" in suggested.evaluate_all("os => os.map(o => o.value)")
    follow = page.locator(".jp-mercury-folder-follow")
    assert follow.inner_text() == "Use file browser's folder"
    shoot(page, "panel-folder-picker.png")
    page.locator(".jp-mercury-model").select_option("scripted/walkthrough")
    assert page.locator(".jp-mercury-model-note").inner_text().startswith(
        "demo, offline: the same task slowly")
    page.locator(".jp-mercury-prompt-text").fill("Write greet(name) slowly, with a test.")
    with page.expect_request(is_start) as sent:
        page.locator(".jp-mercury-start").click()
    assert sent.value.post_data_json["workdir"] == "walk"
    view = detail(page, "running")
    assert view.locator(".jp-mercury-meta").inner_text().startswith(f"{root}/walk ·")
    deadline = time.monotonic() + 30
    while not (lab.root / "walk" / "greet.py").exists():  # its first step landed
        assert time.monotonic() < deadline, "the walkthrough wrote nothing"
        time.sleep(0.05)
    view.locator(".jp-mercury-stop").click()
    stopped = detail(page, "aborted", timeout=5_000)
    assert "Stopped" in stopped.locator(".jp-mercury-banner").inner_text()
    shoot(page, "panel-walkthrough-stopped.png")
    stopped.locator(".jp-mercury-continue").click()
    done = detail(page, "completed", timeout=90_000)
    assert done.locator(".jp-mercury-banner").inner_text().startswith("✓ Task complete")
    assert "python -m pytest -q" in done.locator(".jp-mercury-evidence").inner_text()
    done.locator('.jp-mercury-change[data-path="greet.py"] summary').click()
    assert "+def greet(name):" in done.locator(".jp-mercury-diff").first.inner_text()
    shoot(page, "panel-walkthrough-completed.png")
    assert (lab.root / "walk" / "test_greet.py").exists()
    assert not (lab.root / "greet.py").exists()  # nothing in the file browser's folder
    follow.click()
    page.wait_for_function("r => document.querySelector('.jp-mercury-folder-full')"
                           "?.textContent === r", arg=root)


def test_a_start_without_a_key_is_refused_with_a_way_to_the_form(page: Any, lab: Lab) -> None:
    text = "Summarise the notes (no key for this model)."
    open_panel(page)
    page.locator(".jp-mercury-list").wait_for()
    page.locator(".jp-mercury-model").select_option("gpt-4o-mini")
    page.locator(".jp-mercury-prompt-text").fill(text)
    with page.expect_response(lambda r: is_start(r.request)) as replied:
        page.locator(".jp-mercury-start").click()
    assert replied.value.status == 409
    refused = page.locator(".jp-mercury-start-error")
    refused.wait_for()
    message = refused.inner_text()
    assert message.startswith("Not started: no API key for the model gpt-4o-mini: set "
                              "OPENAI_API_KEY or MERCURY_API_KEY.")
    assert "couldn't finish" not in message  # it never started: no failure to report
    assert message.count("no API key") == 1
    assert "or pick a demo model" in message
    assert page.locator(".jp-mercury-prompt-text").input_value() == text  # kept, to retry
    assert page.locator(".jp-mercury-detail").count() == 0  # no task opened...
    assert text not in listed_texts(lab)  # ...none recorded: no failed row, no Continue
    assert not any(text in row for row in rows(page).all_inner_texts())
    shoot(page, "panel-refused-start.png")
    refused.locator(".jp-mercury-connect-link").click()
    form = page.locator(".jp-mercury-connect")
    form.wait_for()
    assert form.locator(".jp-mercury-connect-model").is_visible()


def connect(page: Any, model: str, base: str, key: str) -> Any:
    page.locator(".jp-mercury-connect-open").click()
    form = page.locator(".jp-mercury-connect")
    form.locator(".jp-mercury-connect-model").fill(model)
    form.locator(".jp-mercury-connect-base").fill(base)
    form.locator(".jp-mercury-connect-key").fill(key)
    form.locator(".jp-mercury-connect-check").click()
    return form


def test_a_connected_loopback_model_is_checked_picked_and_runs(page: Any, lab: Lab) -> None:
    (lab.root / "connected").mkdir()
    script = [Turn(text="OK"), Turn(text="The folder is empty: there are no notes yet.")]
    with LoopbackServer(script, on_exhausted="repeat_last") as server:
        open_panel(page)
        form = connect(page, "loop-browser", server.url, SECRET)
        done = form.locator(".jp-mercury-connect-done")
        done.wait_for()
        assert done.inner_text() == ('Connected loop-browser: it answered "OK". Key kept in '
                                     "this server's memory until Lab stops.")
        assert len(server.requests) == 1 and server.requests[0]["max_tokens"] <= 16
        assert form.locator(".jp-mercury-connect-key").input_value() == ""  # not kept here
        page.wait_for_function(  # the connected model is now the picked one
            "() => document.querySelector('.jp-mercury-model')?.value === 'loop-browser'")
        option = page.locator('.jp-mercury-model option[value="loop-browser"]')
        assert option.inner_text() == "loop-browser · connected"
        shoot(page, "panel-connect.png")
        form.locator(".jp-mercury-connect-close").click()
        page.locator(".jp-mercury-prompt-text").fill("What do the notes in this folder say?")
        pick_folder(page, "connected")
        with page.expect_request(is_start) as sent:
            page.locator(".jp-mercury-start").click()
        assert sent.value.post_data_json["model"] == "loop-browser"
        task_id = str(sent.value.response().json()["task_id"])
        record = wait_finished(lab, task_id)["task"]
        assert len(server.requests) >= 2  # the task went to the connected endpoint
        posts = list(server.posts)
    assert record["models"] == ["loop-browser"]
    assert "no API key" not in (record["banner"] or "")
    assert all({k.lower(): v for k, v in headers.items()}.get("authorization")
               == f"Bearer {SECRET}" for _, headers in posts)  # with its key
    assert SECRET not in page.content()


def test_a_refused_check_shows_the_providers_error_verbatim(page: Any, lab: Lab) -> None:
    with LoopbackServer([Turn(fault=HttpError(401, message=REFUSAL))]) as server:
        open_panel(page)
        form = connect(page, "loop-refused", server.url, SECRET)
        shown = form.locator(".jp-mercury-connect-error pre")
        shown.wait_for()
        assert len(server.requests) == 1
    assert shown.inner_text() == REFUSAL
    assert form.locator(".jp-mercury-connect-done").count() == 0
    assert page.locator('.jp-mercury-model option[value="loop-refused"]').count() == 0
    assert "loop-refused" not in [c["model"] for c in lab.api("models")["connected"]]
    shoot(page, "panel-connect-error.png")
