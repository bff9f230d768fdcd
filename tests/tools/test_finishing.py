"""finish: the typed end of a turn, validated, carried as a FinishCall, changing nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mercury_nb.contract.turns.final_reply import FinishCall
from mercury_nb.tools.base import ToolContext
from mercury_nb.tools.registry import ToolRegistry


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param({"status": "done", "summary": "Added add()."},
                     FinishCall("done", "Added add()."), id="done"),
        pytest.param({"status": "blocked", "summary": "No change.", "blocker": "no network"},
                     FinishCall("blocked", "No change.", "no network"), id="blocked"),
        pytest.param({"status": "question", "question": "JSON or SQLite?"},
                     FinishCall("question", "", "JSON or SQLite?"), id="question"),
        pytest.param({"status": "no_change", "summary": "notes/q3.md mentions the budget."},
                     FinishCall("no_change", "notes/q3.md mentions the budget."),
                     id="no-change"),
        # only the detail that belongs to the status is kept
        pytest.param({"status": "done", "summary": "Done.", "blocker": "nothing"},
                     FinishCall("done", "Done."), id="stray-blocker"),
        pytest.param({"status": "blocked", "question": "why?"}, FinishCall("blocked"),
                     id="blocked-with-a-question-field"),
    ],
)
async def test_finish_carries_the_typed_call(registry: ToolRegistry, ctx: ToolContext,
                                             args: dict[str, Any], expected: FinishCall) -> None:
    result = await registry.execute("finish", json.dumps(args), ctx)
    assert result.ok
    assert result.finish == expected
    assert result.content == f"finished: {expected.status}"
    assert result.changed_paths == ()
    assert not registry.is_mutating("finish")


@pytest.mark.parametrize(
    "args",
    [pytest.param({"status": "finished"}, id="unknown-status"),
     pytest.param({"summary": "Done."}, id="no-status")],
)
async def test_a_bad_status_is_an_error_the_model_sees(registry: ToolRegistry, ctx: ToolContext,
                                                       args: dict[str, Any]) -> None:
    result = await registry.execute("finish", json.dumps(args), ctx)
    assert not result.ok and result.finish is None
    assert "status" in result.content


def test_the_schema_stays_short(registry: ToolRegistry) -> None:
    (schema,) = registry.schemas(["finish"])
    assert schema["function"]["parameters"]["required"] == ["status"]
    assert len(json.dumps(schema)) < 700  # small models, small windows
