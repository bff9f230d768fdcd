"""Every state of the ``%%mercury`` cell widget in a real JupyterLab, in Debian's chromium.

One notebook drives scripted models (offline) through each state; each state is checked on
the text the browser shows and photographed to ``docs/widget-<state>.png``:
running, pulse (its seconds growing), aborted (Stop), completed, paused, failed, ask_user,
a chat answer rendered as Markdown with hostile HTML left inert, and the honest endings of
a model without tools (no-tools), a file the task named left uncreated (files-missing) and
a question to the user (question), and an answer about a file it never read (unread).
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from widget_fixtures import WidgetLab, widget_lab

pytestmark = [pytest.mark.slow, pytest.mark.kernel]
__all__ = ["widget_lab"]  # a fixture, imported for pytest; `browser` is conftest.py's (one
# Playwright per session: a second sync Playwright cannot start while the first one runs)

DOCS = Path(__file__).resolve().parents[2] / "docs"
SHOTS = Path(tempfile.gettempdir()) / "mercury-widget-shots"
STATE_TIMEOUT_S = 60.0

SETUP = '''\
%env MERCURY_STALL_SOFT_MS=1500
%env MERCURY_MAX_AUTO_CONTINUATIONS=0
%env MERCURY_RETRY_ATTEMPTS=0
import tempfile
from pathlib import Path
from mercury_nb.testing import HttpError, Turn, call, register_scripted_model

def fresh():
    return Path(tempfile.mkdtemp(prefix="mercury-browser-"))

GREET = 'def greet(name):\\n    return f"Hello, {name}!"\\n'
TEST = ('from greet import greet\\n\\n\\ndef test_greet():\\n'
        '    assert greet("Ada") == "Hello, Ada!"\\n')
ANSWER = (
    "**greet()** returns a greeting, for example `greet('Ada')`:\\n\\n"
    "- it takes one `name`\\n- it returns `Hello, <name>!`\\n\\n"
    "<img src=x onerror=\\"window.__mercury_xss = 1\\"> <script>window.__mercury_xss = 2</script>"
)
register_scripted_model("slow", [Turn(tool_calls=(call("run_command", command="sleep 60"),)),
                                 Turn(text="Slept.")])
register_scripted_model("build", [
    Turn(tool_calls=(call("create_file", path="greet.py", content=GREET),
                     call("create_file", path="test_greet.py", content=TEST))),
    Turn(text="Added greet() and its test."),
    Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
    Turn(text="greet() is in **greet.py** and its test passes."),
])
register_scripted_model("chat", [Turn(text=ANSWER)])
register_scripted_model("busy", [
    Turn(tool_calls=(call("write_file", path="a.txt", content="a\\n"),)),
    Turn(tool_calls=(call("write_file", path="b.txt", content="b\\n"),)),
    Turn(text="Wrote both."),
])
register_scripted_model("down", [Turn(fault=HttpError(401, message="invalid API key"))])
register_scripted_model("asks", [
    Turn(tool_calls=(call("ask_user", question="Rewrite the parser or patch it?",
                          options=["rewrite", "patch"], recommended="patch"),)),
    Turn(text="Patching it, as you chose."),
])
PROSE = '```python\\nprint("Hello, World!")\\n```\\n\\nRun it with `python hello.py`.'
register_scripted_model("notools", [Turn(text=PROSE) for _ in range(3)])
SORRY = Turn(text="I'm sorry, I can't do that.")
register_scripted_model("junk", [
    Turn(tool_calls=(call("create_file", path="file.txt", content="A sample file\\n"),)),
    SORRY, SORRY,  # the second answers the gate's forced round naming hello.py
])
register_scripted_model("unsure", [Turn(tool_calls=(call(
    "finish", status="question", question="Should todos live in JSON or SQLite?"),))])
def with_readme():
    folder = fresh()
    (folder / "README.md").write_text("# todo\\n\\nA todo list for the terminal.\\n")
    return folder

register_scripted_model("guess", [Turn(text="README.md says this is a weather app.")])
register_scripted_model("allow", [
    Turn(tool_calls=(call("run_command", command="touch allowed.txt"),)),
    Turn(text="allowed.txt is there."),
])
register_scripted_model("approve", [
    Turn(tool_calls=(call("run_command", command="pip install --dry-run requests"),)),
    Turn(text="requests would install."),
])
print("ready")
'''

STREAM_GATE = Path(tempfile.mkdtemp(prefix="mercury-stream-gate-")) / "open"
"""Its appearance lets the ``stream`` model finish its reply (the test's gate, not a timer)."""
STREAMED = ("Reading the plan first. It has three parts: the parser, the tests and the docs. "
            "All three are in place now.")
SETUP += (
    "from mercury_nb.testing import Stall\n"
    f"register_scripted_model('stream', [Turn(text={STREAMED!r}, chunk_size=6, fault=Stall("
    f"seconds=120, after_chunks=9, until={str(STREAM_GATE)!r}))])\n"
    "print('stream ready')\n"
)

ALLOWED = Path(tempfile.mkdtemp(prefix="mercury-allow-once-"))
"""The ``allow`` cell's workspace: its command's file appears there once allowed."""
HELLO_TASK = "Create hello.py that prints hello world, and run it."
CELLS = {
    "load": "%load_ext mercury_nb",
    "setup": SETUP,
    "slow": "%%mercury --model scripted/slow --workdir {fresh()}\nWait for a minute.",
    "build": "%%mercury --model scripted/build --workdir {fresh()}\n"
             "Write greet(name) in greet.py with a test, and make the test pass.",
    "chat": "%%mercury --model scripted/chat --chat --workdir {fresh()}\nWhat does greet() return?",
    "busy": "%%mercury --model scripted/busy --max-steps 1 --workdir {fresh()}\n"
            "Write a.txt and b.txt.",
    "down": "%%mercury --model scripted/down --workdir {fresh()}\nBuild the todo app.",
    "asks": "%%mercury --model scripted/asks --chat --workdir {fresh()}\nFix the parser.",
    "notools": "%%mercury --model scripted/notools --workdir {fresh()}\n" + HELLO_TASK,
    "missing": "%%mercury --model scripted/junk --workdir {fresh()}\n" + HELLO_TASK,
    "question": "%%mercury --model scripted/unsure --workdir {fresh()}\n"
                "Build a todo CLI in todo.py with tests.",
    "unread": "%%mercury --model scripted/guess --chat --workdir {with_readme()}\n"
              "What does this project do?",
    "stream": "%%mercury --model scripted/stream --chat --workdir {fresh()}\n"
              "What does the plan say?",
    "approve": "%%mercury --model scripted/approve --permissions edits --chat "
               "--workdir {fresh()}\nWould requests install?",
    "allow": "%%mercury --model scripted/allow --permissions edits --chat "
             f"--workdir {ALLOWED}\nTouch allowed.txt.",
}
ORDER = list(CELLS)


class Notebook:
    """The test notebook open in JupyterLab: run a cell, read a cell, photograph a cell."""

    def __init__(self, page: Any) -> None:
        self.page = page

    def cell(self, name: str) -> Any:
        return self.page.locator(".jp-Notebook .jp-Cell").nth(ORDER.index(name))

    def output(self, name: str) -> Any:
        return self.cell(name).locator(".jp-Cell-outputArea")

    def run(self, name: str) -> None:
        self.page.evaluate(
            """async (index) => {
                const panel = window.jupyterapp.shell.currentWidget;
                panel.content.activeCellIndex = index;
                await window.jupyterapp.commands.execute('notebook:run-cell');
            }""",
            ORDER.index(name),
        )

    def text(self, name: str) -> str:
        return str(self.output(name).inner_text())

    def wait_for(self, name: str, ok: Callable[[str], bool], what: str) -> str:
        deadline = time.monotonic() + STATE_TIMEOUT_S
        while True:
            text = self.text(name) if self.output(name).count() else ""
            if ok(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"cell {name!r} never showed {what}; it shows:\n{text}")
            self.page.wait_for_timeout(100)

    def shoot(self, name: str, state: str) -> None:
        """Screenshot a cell; into docs/ with MERCURY_UPDATE_SCREENSHOTS=1 (so a plain test
        run leaves the tracked images alone), else into a temporary folder."""
        folder = DOCS if os.environ.get("MERCURY_UPDATE_SCREENSHOTS") == "1" else SHOTS
        folder.mkdir(parents=True, exist_ok=True)
        self.cell(name).scroll_into_view_if_needed()
        self.cell(name).screenshot(path=str(folder / f"widget-{state}.png"))

    def stop_visible(self, name: str) -> bool:
        buttons = self.output(name).locator("button", has_text="Stop")
        return bool(buttons.count()) and bool(buttons.first.is_visible())


@pytest.fixture(scope="module")
def notebook(widget_lab: WidgetLab, browser: Any) -> Iterator[Notebook]:
    widget_lab.write_notebook("widget-states.ipynb", list(CELLS.values()))
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.goto(widget_lab.notebook_url("widget-states.ipynb"))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel"
        " && w.sessionContext.session.kernel.status === 'idle'; }",
        timeout=90_000,
    )
    book = Notebook(page)
    book.run("load")
    book.run("setup")
    book.wait_for("setup", lambda t: "stream ready" in t, "ready")
    yield book
    context.close()


def seconds_of(text: str) -> int | None:
    found = re.search(r"running sleep 60 · (\d+) s", text)
    return int(found.group(1)) if found else None


def test_running_pulse_and_stop(notebook: Notebook) -> None:
    notebook.run("slow")
    text = notebook.wait_for("slow", lambda t: "run_command" in t, "the running tool")
    assert "step 1/75 · run_command" in text and "sleep 60" in text
    assert notebook.stop_visible("slow")
    notebook.shoot("slow", "running")

    first = seconds_of(notebook.wait_for("slow", lambda t: seconds_of(t) is not None, "a pulse"))
    assert first is not None
    later = notebook.wait_for("slow", lambda t: (seconds_of(t) or 0) >= first + 2,
                              "the pulse seconds growing")
    assert "running sleep 60 · " in later
    notebook.shoot("slow", "pulse")

    notebook.output("slow").locator("button", has_text="Stop").click()
    text = notebook.wait_for("slow", lambda t: "Stopped at your request" in t, "the abort")
    assert "aborted" in text and "running sleep 60 · " not in text
    assert not notebook.stop_visible("slow")
    notebook.shoot("slow", "aborted")


def test_completed_hides_the_checking_line_and_stop(notebook: Notebook) -> None:
    notebook.run("build")
    text = notebook.wait_for("build", lambda t: "✓ Task complete" in t, "completion")
    assert "completed · " in text and "✓ Verified: python -m pytest -q ✓" in text
    assert "Checking my work" not in text
    assert not notebook.stop_visible("build")
    assert notebook.output("build").locator(".mercury-answer strong",
                                            has_text="greet.py").count() == 1
    notebook.shoot("build", "completed")


def test_a_chat_answer_is_markdown_and_its_html_is_inert(notebook: Notebook) -> None:
    notebook.run("chat")
    text = notebook.wait_for("chat", lambda t: "Response delivered" in t, "the answer")
    answer = notebook.output("chat").locator(".mercury-answer")
    assert answer.locator("strong", has_text="greet()").count() == 1
    assert answer.locator("li").count() == 2
    assert "**" not in text
    assert answer.locator("img, script").count() == 0
    assert "<img src=x" in text  # shown as text
    assert notebook.page.evaluate("() => window.__mercury_xss === undefined")
    notebook.shoot("chat", "answer")


def test_paused(notebook: Notebook) -> None:
    notebook.run("busy")
    text = notebook.wait_for("busy", lambda t: "I've paused for now" in t, "the pause")
    assert "paused · " in text and 'Send "continue"' in text
    assert not notebook.stop_visible("busy")
    notebook.shoot("busy", "paused")


def test_failed(notebook: Notebook) -> None:
    notebook.run("down")
    text = notebook.wait_for("down", lambda t: "All LLM providers failed" in t, "the failure")
    assert "failed · 0 steps" in text  # no model ever answered
    assert "invalid API key" in text
    assert not notebook.stop_visible("down")
    notebook.shoot("down", "failed")


def test_ask_user(notebook: Notebook) -> None:
    notebook.run("asks")
    notebook.wait_for("asks", lambda t: "Rewrite the parser or patch it?" in t, "the question")
    confirm = notebook.output("asks").locator("button", has_text="Confirm")
    confirm.wait_for(state="visible", timeout=30_000)
    assert notebook.output("asks").locator("input[type=radio]:checked").count() == 1
    notebook.shoot("asks", "ask_user")
    confirm.click()
    text = notebook.wait_for("asks", lambda t: "Patching it" in t, "the answer after Confirm")
    assert "completed · " in text


def test_no_tool_support_fails_naming_the_fix_and_offers_no_resume(notebook: Notebook) -> None:
    notebook.run("notools")
    text = notebook.wait_for("notools", lambda t: "Resuming this task cannot help" in t,
                             "the no-tools failure")
    assert "failed · " in text
    assert ("I can't do this task with scripted/notools: it does not take tools, so it can "
            "neither write a file nor run a command.") in text
    assert ('How I know: it answered 2 forced tool calls (tool_choice "required") with prose '
            "and no call.") in text
    assert "To fix it: choose a model with tool support; or start llama-server with --jinja" in text
    assert 'Send "continue"' not in text and "pick up right where" not in text
    assert not notebook.stop_visible("notools")
    notebook.shoot("notools", "no-tools")


def test_a_named_file_left_uncreated_pauses_naming_it(notebook: Notebook) -> None:
    notebook.run("missing")
    text = notebook.wait_for("missing", lambda t: "was not created" in t, "the files-missing pause")
    assert "paused · " in text and "✓" not in text
    assert ("I've paused for now — hello.py was not created. "
            'Send "continue" and I\'ll pick up right where I left off.') in text
    assert "Changes so far:\n+1 −0 file.txt (created)" in text
    notebook.shoot("missing", "files-missing")


def test_a_question_to_the_user_pauses_asking_it(notebook: Notebook) -> None:
    notebook.run("question")
    text = notebook.wait_for("question", lambda t: "I need your answer" in t, "the question")
    assert "paused · " in text
    assert ("I need your answer before I go on: Should todos live in JSON or SQLite?\n"
            'Answer with "continue, <your answer>"') in text
    assert "Task complete" not in text
    notebook.shoot("question", "question")


def test_an_answer_about_a_file_it_never_read_says_so(notebook: Notebook) -> None:
    notebook.run("unread")
    text = notebook.wait_for("unread", lambda t: "Response delivered" in t, "the answer")
    assert "README.md says this is a weather app." in text
    assert ("Response delivered · no file changes (snapshot-verified)\n"
            "answered without reading README.md") in text
    notebook.shoot("unread", "unread")


def test_the_models_text_streams_into_the_widget_then_the_answer_replaces_it(
        notebook: Notebook) -> None:
    notebook.run("stream")
    # the model is held mid-reply until the gate file exists: this text came live
    text = notebook.wait_for("stream", lambda t: "Reading the plan first." in t,
                             "the streamed text")
    assert "All three are in place" not in text and notebook.stop_visible("stream")
    assert notebook.output("stream").locator(".mercury-live-text").count() == 1
    text = notebook.wait_for("stream", lambda t: "waiting for the model · " in t,
                             "the silent model's pulse")
    assert re.search(r"step 1/75 · waiting for the model · \d+ s", text)
    notebook.shoot("stream", "streaming")
    STREAM_GATE.touch()
    text = notebook.wait_for("stream", lambda t: "All three are in place now." in t
                             and not notebook.stop_visible("stream"), "the final answer")
    assert notebook.output("stream").locator(".mercury-live-text").count() == 0
    assert text.count("Reading the plan first.") == 1  # the answer, not the live text too


def test_an_edits_cell_asks_before_its_command_with_the_three_answers(
        notebook: Notebook) -> None:
    notebook.run("approve")
    text = notebook.wait_for("approve", lambda t: "Allow once" in t, "the approval")
    assert "pip install --dry-run requests" in text and "Deny" in text
    assert "Always allow `pip install --dry-run requests`" in text
    always = notebook.output("approve").locator("button", has_text="Always allow")
    assert always.evaluate("b => b.scrollWidth <= b.clientWidth")  # the whole rule shows
    notebook.shoot("approve", "approval")
    notebook.output("approve").locator("button", has_text="Deny").click()
    text = notebook.wait_for("approve", lambda t: "Allow once" not in t
                             and not notebook.stop_visible("approve"), "the end after Deny")
    assert "Always allow" not in text and "Deny" not in text


def test_allow_once_in_the_cell_runs_the_command(notebook: Notebook) -> None:
    notebook.run("allow")
    text = notebook.wait_for("allow", lambda t: "Allow once" in t, "the approval")
    assert "touch allowed.txt" in text
    assert not (ALLOWED / "allowed.txt").exists()  # asked before it ran
    notebook.output("allow").locator("button", has_text="Allow once").click()
    text = notebook.wait_for("allow", lambda t: "Allow once" not in t
                             and not notebook.stop_visible("allow"), "the end after Allow once")
    assert (ALLOWED / "allowed.txt").exists()
    assert "allowed.txt (created)" in text  # the change summary names what it made
