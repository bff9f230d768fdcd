"""Doom loops and provider errors over real HTTP: the fallback chain, the ledger, redaction."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import AgentEvent, Notice
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.banners import RESUME_HINT, TASK_COMPLETE
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import DropMidStream, HttpError, LoopbackServer, Turn, call

TASK = "Write the setup notes in notes.md"
QUESTION = "What is in this folder?"
SECRET = "sk-SECRET-123456"


def chain_config(tmp_path: Path, server: LoopbackServer, *names: str, **kw: Any) -> MercuryConfig:
    chain = [f"openai/{name}" for name in names]
    values: dict[str, Any] = {"retry_base_s": 0.0, "retry_max_s": 0.05, "request_timeout_s": 30,
                              "api_key": "sk-test"}
    values.update(kw)
    return MercuryConfig(workdir=tmp_path, model=chain[0], fallbacks=tuple(chain[1:]),
                         api_base=server.url, **values)


def notices(events: list[AgentEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


def user_texts(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "user"]


FINISHES = [
    Turn(tool_calls=(call("create_file", path="notes.md", content="# Setup\n\npip install .\n"),)),
    Turn(text="Wrote notes.md."),
]

LOOP_SHAPES = [
    pytest.param(
        [Turn(tool_calls=(call("list_dir", path="."),)) for _ in range(4)],
        'list_dir({"path":"."}) called 4 times in a row with the same arguments',
        id="identical-calls-x4",
    ),
    pytest.param(
        [Turn(tool_calls=(call("read_file", path=f"missing{n}.txt"),)) for n in range(6)],
        "read_file failed 6 times in a row",
        id="same-tool-failing-x6",
    ),
    pytest.param(
        [Turn(text=text, finish_reason="length") for text in (
            "First, the overall goal of these notes.",
            "Second: who reads them and why that matters.",
            "Third, a digression on packaging history in Python.",
            "Fourth — what pip does under the hood with wheels.",
            "Fifth: virtual environments, and where they live on disk.",
            "Sixth, some thoughts about lock files versus ranges.",
        )],
        "6 steps in a row without any tool call",
        id="idle-steps-x6",
    ),
    pytest.param(
        [Turn(tool_calls=(call("list_dir", path="."),)) if n % 2 == 0
         else Turn(tool_calls=(call("read_file", path="setup.cfg"),)) for n in range(6)],
        'alternating between list_dir({"path":"."}) and read_file({"path":"setup.cfg"}), '
        "3 times in a row",
        id="a-b-cycle-x3",
    ),
    pytest.param(
        [Turn(text=f"Let me look at the config file again to find the {word} setting.",
              tool_calls=(call("read_file", path=f"{word}.cfg"),))
         for word in ("port", "host", "user", "path")],
        "4 near-identical replies in a row",
        id="near-identical-replies-x4",
    ),
]


@pytest.mark.parametrize(("looping", "description"), LOOP_SHAPES)
async def test_doom_loop_moves_to_the_next_provider_which_finishes(
    tmp_path: Path, loopback_server, looping: list[Turn], description: str
) -> None:
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = demo\n")
    server = loopback_server({"a": looping, "b": FINISHES})
    events: list[AgentEvent] = []
    # cut prose is retried (shorter) for six rounds here, so the idle steps reach the detector
    config = chain_config(tmp_path, server, "a", "b", max_prose_truncation_rounds=6)
    outcome = await run_new_session(TASK, config, on_event=events.append)
    assert outcome.status == "completed", outcome.banner
    assert outcome.banner.startswith(TASK_COMPLETE)
    told = user_texts(server.requests_for("b")[0])[-1]
    assert told.startswith("[SYSTEM: LOOP DETECTED]") and description in told
    switch, = notices(events)
    assert switch.startswith("⚠ openai/a: doom-loop: ")
    assert switch.endswith(" — switching to openai/b and continuing.")
    assert description in outcome.providers["openai/a"]


@pytest.mark.parametrize(("looping", "description"), LOOP_SHAPES)
async def test_doom_loop_on_every_provider_pauses_naming_the_loop(
    tmp_path: Path, loopback_server, looping: list[Turn], description: str
) -> None:
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = demo\n")
    server = loopback_server({"a": looping, "b": looping})
    config = chain_config(tmp_path, server, "a", "b", max_truncation_rounds=20,
                          max_prose_truncation_rounds=20)
    outcome = await run_new_session(TASK, config)
    assert outcome.status == "paused"
    assert outcome.banner.startswith(
        "I've paused for now — I got stuck in a loop on every model I could try (last: ")
    assert description in outcome.banner
    assert outcome.banner.endswith(RESUME_HINT)
    assert set(outcome.providers) == {"openai/a", "openai/b"}


async def test_retry_after_is_waited_for(tmp_path: Path, loopback_server) -> None:
    server = loopback_server({"a": [Turn(fault=HttpError(429, retry_after=1)),
                                    Turn(text="Just a setup.cfg file.")]})
    config = chain_config(tmp_path, server, "a", retry_max_s=5.0)
    outcome = await run_new_session(QUESTION, config)
    assert outcome.status == "completed"
    first, second = server.request_times
    assert second - first >= 1.0


async def test_unauthorized_provider_is_never_retried(tmp_path: Path, loopback_server) -> None:
    server = loopback_server({
        "a": [Turn(fault=HttpError(401, message="Incorrect API key provided"))],
        "b": [Turn(text="Just a setup.cfg file.")],
    })
    events: list[AgentEvent] = []
    outcome = await run_new_session(QUESTION, chain_config(tmp_path, server, "a", "b"),
                                    on_event=events.append)
    assert len(server.requests_for("a")) == 1
    assert outcome.status == "completed"
    switch, = notices(events)
    assert switch.startswith("⚠ openai/a: HTTP 401: ")
    assert outcome.providers["openai/a"].startswith("HTTP 401: ")


async def test_server_error_on_a_then_b_finishes(tmp_path: Path, loopback_server) -> None:
    server = loopback_server({
        "a": [Turn(fault=HttpError(503, message="overloaded"))] * 3,
        "b": FINISHES,
    })
    events: list[AgentEvent] = []
    config = chain_config(tmp_path, server, "a", "b", retry_attempts=2)
    outcome = await run_new_session(TASK, config, on_event=events.append)
    assert len(server.requests_for("a")) == 3
    assert outcome.status == "completed", outcome.banner
    assert (tmp_path / "notes.md").exists()
    switch, = notices(events)
    assert switch.startswith("⚠ openai/a: HTTP 503: ")
    assert switch.endswith("— switching to openai/b and continuing.")
    assert outcome.models == ["openai/a", "openai/b"]


async def test_every_provider_failing_ends_with_the_ledger(
    tmp_path: Path, loopback_server
) -> None:
    server = loopback_server({
        "a": [Turn(fault=HttpError(503, message="a is overloaded"))] * 2,
        "b": [Turn(fault=HttpError(500, message="b broke"))] * 2,
    })
    outcome = await run_new_session(TASK, chain_config(tmp_path, server, "a", "b",
                                                      retry_attempts=1))
    assert outcome.status == "failed"
    lines = outcome.banner.splitlines()
    assert lines[0].startswith("All LLM providers failed. Last error: HTTP 500: ")
    assert "b broke" in lines[0]
    assert lines[1] == "Per-provider:"
    assert lines[2].startswith("- openai/a: HTTP 503: ") and "a is overloaded" in lines[2]
    assert lines[3].startswith("- openai/b: HTTP 500: ") and "b broke" in lines[3]
    assert len(lines) == 4
    assert list(outcome.providers) == ["openai/a", "openai/b"]
    assert all(len(reason) <= 140 for reason in outcome.providers.values())


@pytest.mark.parametrize(
    "broken_step",
    [
        pytest.param(Turn(text="Now adding the install section", fault=DropMidStream(2)),
                     id="text-streamed-then-dropped"),
        pytest.param(Turn(fault=HttpError(503, message="overloaded")),
                     id="tool-completed-then-next-step-failed"),
    ],
)
async def test_partial_turn_is_kept_and_the_next_provider_continues(
    tmp_path: Path, loopback_server, broken_step: Turn
) -> None:
    server = loopback_server({
        "a": [FINISHES[0], broken_step],
        "b": [Turn(text="notes.md is written.")],
    })
    outcome = await run_new_session(TASK, chain_config(tmp_path, server, "a", "b",
                                                      retry_attempts=0))
    assert outcome.status == "completed", outcome.banner
    continued = server.requests_for("b")[0]["messages"]
    assert any(m["role"] == "tool" and m["content"].startswith("created notes.md")
               for m in continued)
    assert str(continued[-1]["content"]).startswith("[SYSTEM: CONTINUE FROM PARTIAL]")
    assert [c.path for c in outcome.changes] == ["notes.md"]


async def test_api_key_never_shown_stored_or_logged(
    tmp_path: Path, loopback_server, caplog: pytest.LogCaptureFixture
) -> None:
    server = loopback_server({
        "a": [Turn(fault=HttpError(401, message=f"Incorrect API key provided: {SECRET}"))],
        "b": [Turn(fault=HttpError(503, message=f"upstream refused key={SECRET}"))] * 2,
    })
    events: list[AgentEvent] = []
    config = chain_config(tmp_path, server, "a", "b", api_key=SECRET, retry_attempts=1)
    with caplog.at_level(logging.DEBUG):
        outcome = await run_new_session(TASK, config, on_event=events.append)
    assert outcome.status == "failed"
    assert len(server.requests) == 3
    shown = [outcome.model_dump_json(), *map(repr, events), caplog.text]
    assert not [text for text in shown if "SECRET-123456" in text]
    assert outcome.providers and notices(events)
    assert json.dumps(outcome.providers).count("***") + json.dumps(
        outcome.providers).count("***") >= 2


@pytest.mark.parametrize(
    ("faults", "resumable", "cause"),
    [
        pytest.param({"a": [HttpError(401, message="Incorrect API key")],
                      "b": [HttpError(404, message="model 'b' not found")]},
                     False, {"models": ["openai/a", "openai/b"], "api_base": "{base}"},
                     id="every-provider-refused-for-good"),
        pytest.param({"a": [HttpError(401, message="Incorrect API key")],
                      "b": [HttpError(503, message="overloaded")] * 2},
                     True, {}, id="one-only-overloaded"),
        pytest.param({"a": [HttpError(429)] * 2, "b": [HttpError(500)] * 2}, True, {},
                     id="rate-limited-and-broken"),
    ],
)
async def test_a_provider_failure_offers_a_continue_only_when_one_can_succeed(
    tmp_path: Path, loopback_server, faults: dict[str, list[HttpError]], resumable: bool,
    cause: dict[str, object],
) -> None:
    server = loopback_server({name: [Turn(fault=f) for f in errors]
                              for name, errors in faults.items()})
    config = chain_config(tmp_path, server, "a", "b", retry_attempts=1, retry_base_s=0.0)
    outcome = await run_new_session(TASK, config)
    assert outcome.status == "failed", outcome.banner
    if "api_base" in cause:
        cause = {**cause, "api_base": config.api_base}
    assert (outcome.resumable, outcome.cause) == (resumable, cause)
