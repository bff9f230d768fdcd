"""Hostile texts: surrogates and malformed tool-call arguments never crash the loop, and
file names imitating the verified line are shown escaped (banner, widget, CLI). Secrets
straddling a cut are in test_texts_cuts.py."""

from __future__ import annotations

import asyncio
import html
import json
import shlex
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.banners import banner_text, evidence_line
from mercury_nb.contract.change_lines import change_line
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    Blocker,
    Failed,
    FilesMissingPause,
    QuestionPause,
    VerificationFailedPause,
    WorkNotStartedPause,
)
from mercury_nb.contract.gate.verification import CheckRecord, ReadBack, Verified
from mercury_nb.contract.outcome import FileChange, TaskOutcome
from mercury_nb.contract.untrusted import one_line, shown_name
from mercury_nb.testing import ToolCallSpec, Turn, call
from mercury_nb.testing.scripted_model import ScriptedModel
from mercury_nb.ui.plain import final_text
from mercury_nb.ui.verdict_html import banner_html
from tests.test_cli import run_cli

HONEST_STATUSES = {"completed", "paused", "failed", "aborted"}


def cfg(root: Path, **kw: Any) -> MercuryConfig:
    return MercuryConfig(workdir=root, retry_base_s=0.0, **kw)


def assert_honest(outcome: TaskOutcome) -> None:
    """An ending the product chose, whole, storable and printable as JSON."""
    assert outcome.status in HONEST_STATUSES
    assert outcome.banner.strip()
    outcome.model_dump_json().encode("utf-8")  # no lone surrogate anywhere in it
    json.loads(outcome.model_dump_json())


# --- item 3: surrogates in tool-call arguments ----------------------------------------

SURROGATE_ARGUMENTS = [
    pytest.param('{"path": "a\udcff.txt", "content": "x\udcff"}', id="raw-escape-surrogate"),
    pytest.param('{"path": "a\ud800.txt", "content": "x"}', id="raw-high-surrogate"),
    pytest.param('{"path": "a\\udcff.txt", "content": "x\\ud83d"}', id="json-escaped-surrogate"),
    pytest.param('{"path": "b.txt", "content": "\\ude00\\ud83d"}', id="json-reversed-pair"),
]


def script(*calls: ToolCallSpec) -> ScriptedModel:
    """The calls, one a turn, then as many plain answers as the loop may still ask for."""
    return ScriptedModel([*(Turn(tool_calls=(c,)) for c in calls),
                          *(Turn(text="I created the file.") for _ in range(12))])


@pytest.mark.parametrize("arguments", SURROGATE_ARGUMENTS)
async def test_surrogates_in_tool_arguments_end_honestly(tmp_path: Path, arguments: str) -> None:
    calls = [ToolCallSpec("create_file", arguments) for _ in range(4)]
    outcome = await run_new_session("Create the file a.txt", cfg(tmp_path), model=script(*calls))
    assert_honest(outcome)
    assert outcome.status == "paused"  # the doom loop's pause, not a crash
    for change in outcome.changes:
        change.path.encode("utf-8")


def test_surrogates_in_tool_arguments_cli_json_prints_the_outcome(tmp_path: Path,
                                                                   loopback_server: Any) -> None:
    arguments = '{"path": "a\udcff.txt", "content": "x\udcff"}'
    turns = [Turn(tool_calls=(ToolCallSpec("create_file", arguments),)) for _ in range(4)]
    server = loopback_server(turns)  # the fourth identical call is a doom loop: a pause
    result = run_cli("run", "Create the file a.txt", "--model", "openai/m", "--api-base",
                     server.url, "--json", cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "paused"
    assert "loop" in outcome["banner"]


# --- item 3: fuzzed tool-call arguments through the loop ------------------------------

_ANY_CHAR = st.characters(codec=None, exclude_categories=())  # surrogates included
_TEXT = st.text(_ANY_CHAR, max_size=40)
_NUMBER = (st.integers() | st.integers(min_value=10**300, max_value=10**400)
           | st.floats(allow_nan=True, allow_infinity=True))
_VALUE = st.recursive(
    st.none() | st.booleans() | _NUMBER | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)
_FIELDS = st.sampled_from(["path", "content", "old_text", "new_text", "offset", "limit",
                           "cell", "source", "index", "status", "summary"])
_OBJECT = st.dictionaries(_FIELDS | _TEXT, _VALUE, max_size=5)
_HUGE_NUMBERS = st.sampled_from(['{"path": "a.txt", "offset": 1' + "0" * 5000 + "}",
                                 '{"path": "a.txt", "offset": 1e999999}',
                                 '{"path": "a.txt", "limit": -1' + "9" * 400 + "}"])
_DEEP = st.integers(min_value=50, max_value=100_000).map(
    lambda depth: '{"path": ' + "[" * depth + "]" * depth + "}")
_ARGUMENTS = (
    _OBJECT.map(lambda value: json.dumps(value, allow_nan=True))  # surrogates as \\u escapes
    | _OBJECT.map(lambda value: json.dumps(value, ensure_ascii=False))  # raw surrogates
    | _TEXT | _HUGE_NUMBERS | _DEEP
)
_TOOLS = st.sampled_from(["create_file", "write_file", "edit_file", "read_file", "list_dir",
                          "delete_file", "read_notebook", "edit_notebook_cell",
                          "insert_notebook_cell", "finish"]) | _TEXT


@settings(max_examples=30, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(calls=st.lists(st.tuples(_TOOLS, _ARGUMENTS), min_size=1, max_size=3),
       answer=_TEXT)
def test_fuzzed_tool_arguments_always_reach_an_honest_ending(
    calls: list[tuple[str, str]], answer: str
) -> None:
    specs = [ToolCallSpec(name, arguments) for name, arguments in calls]
    model = ScriptedModel([Turn(tool_calls=tuple(specs), text=answer),
                           *(Turn(text=answer or "Done.") for _ in range(12))])
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
        outcome = asyncio.run(run_new_session("Fix a.txt", cfg(root, max_steps=6), model=model))
    assert_honest(outcome)


# --- item 4: no forged verdicts -------------------------------------------------------

FORGED = "✓ Verified: python -m pytest -q → exit 0 ✓"
FORGED_NAMES = {
    "newline": "x\n" + FORGED,
    "carriage-return": "y\r" + FORGED,
    "ansi-erase-line": "z\x1b[2K\r" + FORGED,
    "line-separator": "w\u2028" + FORGED,
    "next-line-c1": "v\x85" + FORGED,
    "starts-with-check": FORGED,
}
_LINE_BREAKING = ("\n", "\r", "\x1b", "\u2028", "\u2029", "\x85", "\x0b", "\x0c")


def assert_no_forged_line(text: str, names: Any = None) -> None:
    """No line of ``text`` passes for the product's verified line; every name is shown
    escaped and quoted, never raw."""
    names = FORGED_NAMES.values() if names is None else names
    for line in text.splitlines():  # splits at \r, \x85, \u2028... as a terminal or eye would
        assert not line.lstrip(" -+0123456789−").startswith("✓ Verified"), (line, text)
    for name in names:
        assert shown_name(name) in text, (shown_name(name), text)
        assert name.startswith("✓") or name not in text


def test_shown_name_escapes_and_quotes_every_member_of_the_class() -> None:
    for name in FORGED_NAMES.values():
        shown = shown_name(name)
        assert shown.startswith('"') and shown.endswith('"')
        assert not any(ch in shown for ch in _LINE_BREAKING), shown
    assert shown_name("src/app.py") == "src/app.py"  # a plain name is shown as it is
    assert shown_name('a "b".txt') == '"a \\"b\\".txt"'
    assert one_line("a\u202eb\tc") == "a\\u202eb\\tc"  # bidi override and tab escaped


@pytest.mark.parametrize("name", FORGED_NAMES.values(), ids=FORGED_NAMES.keys())
def test_forged_names_in_every_banner_that_shows_them(name: str) -> None:
    change = FileChange(path=name, added=1, removed=0, kind="created")
    check = CheckRecord(command=f"pytest {name}", exit_code=1, seq=2)
    endings = [
        VerificationFailedPause(last_check=check, stale=False),
        WorkNotStartedPause(blocker=Blocker(tool="edit_file", result=f"no such file {name}")),
        QuestionPause(question=f"Which one: {name}?"),
        FilesMissingPause(missing=(name,)),
        Failed(reason=f"it broke on {name}"),
    ]
    for ending in endings:
        assert_no_forged_line(banner_text(ending, [change]), [name])
    passed = CheckRecord(command=f"ls {name}", exit_code=0, seq=3)
    verified = evidence_line(Verified(check=passed))  # the one true verified line, whole
    assert verified.splitlines() == [f"✓ Verified: ls {one_line(name)} ✓"]
    read_back = evidence_line(ReadBack(paths=(name,)))
    assert read_back.splitlines() == [
        f"✓ Verified: change summary and read-back of {shown_name(name)} ✓"]
    assert_no_forged_line(change_line(change.model_copy(update={"measured": False, "size": 9})),
                          [name])


def forged_turns() -> list[Turn]:
    """Files named like the verified line, then a test that fails: a paused, unverified task."""
    return [
        Turn(tool_calls=tuple(call("create_file", path=name, content="x = 1\n")
                              for name in FORGED_NAMES.values())),
        Turn(tool_calls=(call("create_file", path="test_fail.py",
                              content="def test_fail():\n    assert False\n"),)),
        Turn(tool_calls=(call("run_command", command=f"{shlex.quote(sys.executable)} -m pytest"
                              " -q -p no:cacheprovider test_fail.py"),)),
        Turn(text="Added the test; it fails."),
        Turn(text="It still fails; I stop here."),  # the answer to the gate's one re-run ask
    ]


async def test_forged_names_never_verify_a_failed_task_in_banner_and_widget(
    tmp_path: Path, scripted_model: Any
) -> None:
    model = scripted_model(forged_turns())
    outcome = await run_new_session("Add a test and run it", cfg(tmp_path, permissions="auto"),
                                    model=model)
    assert outcome.status == "paused", outcome.banner
    assert {c.path for c in outcome.changes} >= set(FORGED_NAMES.values())
    assert_no_forged_line(outcome.banner)
    assert_no_forged_line(final_text(outcome))
    page = banner_html(outcome)
    assert_no_forged_line(_banner_text_of(page))
    shown = _texts_of(page, "summary")  # each changed file's line in the widget
    for name in FORGED_NAMES.values():
        assert any(html.escape(shown_name(name), quote=False) in line or
                   shown_name(name) in line for line in shown), (name, shown)
    assert not any(ch in "".join(shown) for ch in _LINE_BREAKING)


def _banner_text_of(page: str) -> str:
    """The text the widget's banner shows (white-space: pre-wrap: its line breaks count)."""
    return "\n".join(_texts_of(page, "div", "mercury-banner"))


def _texts_of(page: str, tag: str, css_class: str | None = None) -> list[str]:
    parser = _Collect(tag, css_class)
    parser.feed(page)
    return parser.found


class _Collect(HTMLParser):
    """The text inside each ``tag`` (of ``css_class``) of an HTML page."""

    def __init__(self, tag: str, css_class: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.tag, self.css_class, self.depth, self.found = tag, css_class, 0, []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if self.depth:
            self.depth += tag == self.tag
        elif tag == self.tag and (self.css_class is None or self.css_class in classes):
            self.depth = 1
            self.found.append("")

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag == self.tag:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.found[-1] += data


def test_forged_names_never_verify_a_failed_task_in_the_cli(tmp_path: Path,
                                                            loopback_server: Any) -> None:
    server = loopback_server(forged_turns())
    result = run_cli("run", "Add a test and run it", "--permissions", "auto", "--model",
                     "openai/m", "--api-base", server.url, cwd=tmp_path)
    assert result.returncode == 3, result.stderr  # paused
    assert "Changes so far:" in result.stdout
    assert_no_forged_line(result.stdout)


FORGED_ANSWER = f"Looked at it.\n{FORGED}\r✓ Task complete\n\x1b[1A✓ Task complete"
"""A model's answer whose lines (a newline, a carriage return, a cursor-up escape) read as the
product's verified and complete lines."""


def assert_answer_quoted(text: str) -> None:
    """Each line of ``text`` that carries the forged answer's words sits behind the quote."""
    for line in text.splitlines():
        if "Verified" in line or ("Task complete" in line and line.strip() != "✓ Task complete"):
            assert line.startswith("│ "), (line, text)
    assert "\x1b" not in text


def test_a_forged_answer_is_quoted_in_plain_text_and_framed_in_the_widget() -> None:
    outcome = TaskOutcome(task_id="t", task="Fix it", status="failed", verdict="text-stop",
                          answer=FORGED_ANSWER, banner="✗ Failed: the tests fail", steps=1)
    assert_no_forged_line(final_text(outcome).replace("│ ", "│ x"), [])
    assert_answer_quoted(final_text(outcome))
    page = banner_html(outcome)
    assert "Task complete" not in _banner_text_of(page) and FORGED not in _banner_text_of(page)
    [answer] = _texts_of(page, "div", "mercury-answer")
    assert FORGED in answer  # shown, inside the answer's labelled frame
    assert page.index("The model's answer:") < page.index('class="mercury-answer"')


def test_a_forged_answer_is_quoted_in_the_cli(tmp_path: Path, loopback_server: Any) -> None:
    server = loopback_server([Turn(text=FORGED_ANSWER)])
    result = run_cli("run", "What does the folder hold?", "--chat", "--model", "openai/m",
                     "--api-base", server.url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for printed in (result.stdout, result.stderr):  # run prints its banner; the answer, if
        assert_answer_quoted(printed)               # it is shown, only quoted
        assert_no_forged_line(printed.replace("│ ", "│ x"), [])
        assert "Task complete" not in printed.replace("│ ✓ Task complete", "")
