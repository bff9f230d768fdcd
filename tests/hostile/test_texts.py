"""Hostile texts: surrogates and malformed tool-call arguments never crash the loop, forged
verdict lines in file names are shown escaped, and secrets straddling a cut stay masked."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mercury_nb.agent.task import run_task
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.testing import ToolCallSpec, Turn
from mercury_nb.testing.scripted_model import ScriptedModel
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
    outcome = await run_task("Create the file a.txt", cfg(tmp_path), model=script(*calls))
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
        outcome = asyncio.run(run_task("Fix a.txt", cfg(root, max_steps=6), model=model))
    assert_honest(outcome)
