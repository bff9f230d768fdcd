"""ask_user: one confirmation, the recommended option preselected, never asked twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import AgentEvent, Notice
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import Turn, call

ASK = call("ask_user", question="Rewrite the parser from scratch?",
           options=["rewrite", "patch"], recommended="rewrite")


def tool_replies(model: Any, index: int) -> list[str]:
    return [m["content"] for m in model.requests[index].messages if m["role"] == "tool"]


@pytest.mark.parametrize(
    ("auto_yes", "handler_answer", "expected"),
    [
        pytest.param(True, "patch", "--yes was given, so I took the recommended option: rewrite",
                     id="yes-takes-recommended-without-asking"),
        pytest.param(False, "patch", "The user chose: patch", id="widget-answer-wins"),
        pytest.param(False, None, "no answer within 0s, so I took the recommended option: rewrite",
                     id="timeout-takes-recommended"),
    ],
)
async def test_ask_user_once(tmp_path: Path, scripted_model, auto_yes: bool,
                             handler_answer: str | None, expected: str) -> None:
    asked: list[tuple[str, list[str], str]] = []

    async def handler(question: str, options: list[str], recommended: str, timeout: float):
        asked.append((question, options, recommended))
        return handler_answer

    model = scripted_model([
        Turn(tool_calls=(ASK,)),
        Turn(tool_calls=(ASK,)),
        Turn(text="What would you like next?"),
    ])
    events: list[AgentEvent] = []
    config = MercuryConfig(workdir=tmp_path, auto_yes=auto_yes, ask_user_timeout_s=0)
    await run_new_session("Rewrite the parser", config, model=model, ask_user=handler,
                          on_event=events.append)
    first, = tool_replies(model, 1)
    assert first.startswith(expected)
    second = tool_replies(model, 2)[-1]
    assert second.startswith("You already asked the user once")
    assert len(asked) == (0 if auto_yes else 1)
    assert any(isinstance(e, Notice) and e.text.startswith(expected) for e in events)


async def test_recommended_must_be_an_option(tmp_path: Path, scripted_model) -> None:
    bad = call("ask_user", question="?", options=["a", "b"], recommended="c")
    model = scripted_model([Turn(tool_calls=(bad,)), Turn(text="ok")])
    await run_new_session("What now?", MercuryConfig(workdir=tmp_path), model=model)
    assert tool_replies(model, 1)[0].startswith("Error:")
