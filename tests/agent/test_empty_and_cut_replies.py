"""Empty replies are failed steps, and a stream cut before any tool call completed is asked
again cleanly: the delivered answer is never empty, never a fragment, never missing its start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import AgentEvent, Notice
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.escalation.guard_texts import GUARD_ROUND_NOTICE
from mercury_nb.testing import DropMidStream, LoopbackServer, NoFinish, Stall, Turn, call
from mercury_nb.transport.litellm_model import LiteLLMModel

EMPTY_PAUSE = "every model I could try answered with nothing — no text and no tool call"


def cfg(tmp_path: Path, **kw: Any) -> MercuryConfig:
    return MercuryConfig(workdir=tmp_path, retry_base_s=0.0, **kw)


def chain(tmp_path: Path, server: LoopbackServer, *names: str, **kw: Any) -> MercuryConfig:
    models = [f"openai/{name}" for name in names]
    return MercuryConfig(workdir=tmp_path, model=models[0], fallbacks=tuple(models[1:]),
                         api_base=server.url, api_key="sk-test", retry_base_s=0.0,
                         retry_max_s=0.05, request_timeout_s=30, **kw)


# --- empty replies ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    "empty",
    [
        pytest.param(Turn(text=""), id="nothing"),
        pytest.param(Turn(text=" \n\t "), id="whitespace"),
    ],
)
async def test_an_empty_reply_is_retried_never_delivered(
    tmp_path: Path, backend, empty: Turn
) -> None:
    fake = backend([empty, Turn(text="2 + 2 is 4.")])
    outcome = await run_new_session("What is 2+2?", cfg(tmp_path, mode="chat"), model=fake.model)
    assert (outcome.status, outcome.answer) == ("completed", "2 + 2 is 4."), outcome.banner
    assert fake.requests[1]["messages"] == fake.requests[0]["messages"]


async def test_every_provider_answering_nothing_pauses_naming_it(
    tmp_path: Path, loopback_server
) -> None:
    server = loopback_server({"a": [Turn(text="")] * 2, "b": [Turn(text="  ")] * 2})
    events: list[AgentEvent] = []
    config = chain(tmp_path, server, "a", "b", retry_attempts=1)
    outcome = await run_new_session("Write the setup notes in notes.md", config,
                                    on_event=events.append)
    assert outcome.status == "paused", outcome.banner
    assert outcome.answer is None
    assert EMPTY_PAUSE in outcome.banner and "(last: openai/b)" in outcome.banner
    assert len(server.requests) == 4  # a twice, b twice: no narration-guard round
    texts = [e.text for e in events if isinstance(e, Notice)]
    assert not [t for t in texts if t.startswith(GUARD_ROUND_NOTICE.split("(")[0])]
    assert outcome.providers["openai/a"].startswith("empty-reply: the model answered with nothing")


async def test_empty_streams_in_execute_mode_are_no_narration(
    tmp_path: Path, scripted_model
) -> None:
    model = scripted_model([Turn(text="")] * 3)
    outcome = await run_new_session("Write the setup notes in notes.md",
                                    cfg(tmp_path, retry_attempts=2), model=model)
    assert outcome.status == "paused"
    assert EMPTY_PAUSE in outcome.banner
    assert "description of the work" not in outcome.banner
    assert len(model.requests) == 3


# --- streams cut mid-reply -------------------------------------------------------------------

async def test_a_reply_cut_after_its_first_word_is_asked_again_whole(
    tmp_path: Path, backend
) -> None:
    fake = backend([
        Turn(text="The answer is coming", chunk_size=4, fault=DropMidStream(after_chunks=1)),
        Turn(text="The answer is 4."),
    ])
    outcome = await run_new_session("What is 2+2?", cfg(tmp_path, mode="chat"), model=fake.model)
    assert (outcome.status, outcome.answer) == ("completed", "The answer is 4."), outcome.banner
    assert fake.requests[1]["messages"] == fake.requests[0]["messages"]


async def test_a_stall_after_some_text_asks_again_whole(tmp_path: Path, scripted_model) -> None:
    model = scripted_model([
        Turn(text="The answer is coming", chunk_size=4, fault=Stall(seconds=60, after_chunks=1)),
        Turn(text="The answer is 4."),
    ])
    config = cfg(tmp_path, mode="chat", stall_soft_ms=50, stall_hard_ms=300)
    outcome = await run_new_session("What is 2+2?", config, model=model)
    assert outcome.answer == "The answer is 4."
    assert model.requests[1].messages == model.requests[0].messages


async def test_after_a_completed_tool_call_the_next_provider_continues_without_the_fragment(
    tmp_path: Path, loopback_server
) -> None:
    server = loopback_server({
        "a": [
            Turn(tool_calls=(call("create_file", path="notes.md", content="# Notes\n"),)),
            Turn(text="Wrote notes.md with the", chunk_size=4, fault=DropMidStream(2)),
        ],
        "b": [Turn(text="Wrote notes.md with the setup notes.")],
    })
    config = chain(tmp_path, server, "a", "b", retry_attempts=0)
    outcome = await run_new_session("Write the setup notes in notes.md", config)
    assert outcome.answer == "Wrote notes.md with the setup notes."
    continued = server.requests_for("b")[0]["messages"]
    assert any(m["role"] == "tool" for m in continued)  # the completed call is kept
    assert str(continued[-1]["content"]).startswith("[SYSTEM: CONTINUE FROM PARTIAL]")
    # the cut fragment ("Wrote no") is not in the conversation: only the tool-call turn is
    assert [m for m in continued if m["role"] == "assistant" and not m.get("tool_calls")] == []


@pytest.mark.parametrize(
    "nothing",
    [
        pytest.param(Turn(fault=NoFinish(send_done=True)), id="no-chunks-then-done"),
        pytest.param(Turn(finish_reason=None), id="finish-reason-null"),
        pytest.param(Turn(text=""), id="empty-stop"),
    ],
)
async def test_an_empty_200_stream_through_litellm_is_retried(
    tmp_path: Path, loopback_server, litellm_module, nothing: Turn
) -> None:
    # through hosted_vllm (as with a llama.cpp server) litellm reports finish_reason "stop"
    # for a stream that carried nothing; it is still a failed step, never a "completed" ""
    server = loopback_server([nothing, Turn(text="2 + 2 is 4.")])
    model = LiteLLMModel("hosted_vllm/m", api_base=server.url, api_key="sk-test", timeout_s=30)
    outcome = await run_new_session("What is 2+2?", cfg(tmp_path, mode="chat"), model=model)
    assert (outcome.status, outcome.answer) == ("completed", "2 + 2 is 4."), outcome.banner
    assert server.requests[1]["messages"] == server.requests[0]["messages"]
