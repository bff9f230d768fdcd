"""A hostile endpoint cannot hold a request open: a server that trickles bytes, or streams
without end ignoring ``max_tokens``, is cut by the request's total deadline or the reply's
length cap, on both transports, and the task takes the interrupted path (retry, the next
provider, an honest ending) within the configured bounds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import AgentEvent, Notice
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.turns.stream_bounds import ReplyLimits
from mercury_nb.contract.turns.stream_ending import StreamEnding
from mercury_nb.testing import (
    Endless,
    LoopbackServer,
    Trickle,
    Turn,
    call,
    collect_stream,
)
from mercury_nb.testing.collect import CollectedStream
from mercury_nb.transport.litellm_model import LiteLLMModel
from mercury_nb.transport.openai_model import OpenAIModel
from mercury_nb.transport.protocol import ChatModel, ModelRequest, ProviderError, ToolCallChunk

MakeServer = Callable[..., LoopbackServer]
TIMEOUT_S = 2.0
"""The per-read timeout: every trickled byte arrives well within it."""
DEADLINE_S = 1.5
SLACK_S = 6.0
"""Room for a loaded machine (litellm blocks the loop for a second on its first request);
a trickle below takes minutes, an endless stream forever."""
MAX_TOKENS = 50
PER_TOKEN = 4
LIMITS = ReplyLimits(DEADLINE_S, PER_TOKEN)
REQUEST = ModelRequest(messages=({"role": "user", "content": "build it"},),
                       tools=({"type": "function", "function": {"name": "write_file"}},),
                       max_tokens=MAX_TOKENS)
SLOW = 0.25
"""Seconds between two trickled bytes (a chunk is ~150 bytes: half a minute each)."""
TEXT = "A reply that would take minutes to arrive byte by byte."
WRITE = call("write_file", path="app.py", content="print('hi')\n" * 4)


def _openai(server: LoopbackServer, limits: ReplyLimits = LIMITS) -> ChatModel:
    return OpenAIModel("openai/m", "m", server.url, "sk-test", TIMEOUT_S, limits=limits)


def _litellm(server: LoopbackServer, limits: ReplyLimits = LIMITS) -> ChatModel:
    return LiteLLMModel("openai/m", server.url, "sk-test", TIMEOUT_S, limits)


_warmed: set[str] = set()


@pytest.fixture(params=[pytest.param(_openai, id="openai-sdk"),
                        pytest.param(_litellm, id="litellm")])
async def transport(request: pytest.FixtureRequest,
                    litellm_module: Any) -> Callable[..., ChatModel]:
    """The transport, after one plain request through it: an SDK's first request does a
    second of one-off work (imports, tables) that is no part of what is measured here."""
    factory: Callable[..., ChatModel] = request.param
    if factory.__name__ not in _warmed:
        with LoopbackServer([Turn("warm")]) as server:
            warm = factory(server, ReplyLimits(120.0, PER_TOKEN))
            assert (await collect_stream(warm, REQUEST)).error is None
        _warmed.add(factory.__name__)
    return factory


async def played_within(model: ChatModel, bound_s: float) -> tuple[CollectedStream, float]:
    """The stream collected, and how long it took; fails when it is not over in ``bound_s``."""
    started = time.monotonic()
    task = asyncio.ensure_future(collect_stream(model, REQUEST))
    await asyncio.wait({task}, timeout=bound_s)
    if not task.done():
        task.cancel()
        pytest.fail(f"the stream was still running {bound_s:g}s after the request")
    return task.result(), time.monotonic() - started


TRICKLES = [
    pytest.param(Trickle(SLOW, headers=True), "timeout", id="headers-trickle"),
    pytest.param(Trickle(SLOW), "interrupted", id="trickle-before-any-content"),
    pytest.param(Trickle(SLOW, after_chunks=2), "interrupted", id="trickle-mid-text"),
    pytest.param(Trickle(SLOW, after_chunks=4), "interrupted", id="trickle-mid-tool-call"),
]


@pytest.mark.parametrize(("fault", "kind"), TRICKLES)
async def test_a_trickling_server_is_cut_at_the_deadline(
    transport: Callable[..., ChatModel], loopback_server: MakeServer, fault: Trickle, kind: str
) -> None:
    server = loopback_server([Turn(TEXT, tool_calls=(WRITE,), chunk_size=8, fault=fault)])
    got, took = await played_within(transport(server), DEADLINE_S + SLACK_S)
    assert took >= DEADLINE_S * 0.9, "cut before its deadline"
    assert isinstance(got.error, ProviderError), got.error
    assert got.error.kind == kind
    assert "1.5s request deadline" in got.error.message
    assert got.reply.ending is StreamEnding.INTERRUPTED
    assert not got.reply.complete, "nothing of a cut stream may run"
    assert len(server.requests) == 1, "the transport never retries on its own"


ENDLESS = [
    pytest.param(Turn(fault=Endless()), id="endless-from-the-start"),
    pytest.param(Turn("Here goes:", fault=Endless(every_s=0.001)), id="endless-after-text"),
    pytest.param(Turn(tool_calls=(WRITE,), fault=Endless()), id="endless-after-a-tool-call"),
]


@pytest.mark.parametrize("turn", ENDLESS)
async def test_an_endless_stream_is_cut_at_the_length_cap(
    transport: Callable[..., ChatModel], loopback_server: MakeServer, turn: Turn
) -> None:
    server = loopback_server([turn])
    got, _ = await played_within(transport(server), DEADLINE_S + SLACK_S)
    assert isinstance(got.error, ProviderError), got.error
    assert got.error.kind in ("interrupted", "timeout")
    cap = MAX_TOKENS * PER_TOKEN
    if got.error.kind == "interrupted" and "characters" in got.error.message:
        assert f"ran past {cap} characters, more than max_tokens={MAX_TOKENS}" in (
            got.error.message)
    else:  # a machine too slow to stream 200 characters in 1.5 s: the deadline cut it
        assert "request deadline" in got.error.message
    arguments = sum(len(c.arguments) for c in got.chunks if isinstance(c, ToolCallChunk))
    assert len(got.reply.text) + arguments <= cap, "more of the reply was kept than the cap"
    assert got.reply.ending is StreamEnding.INTERRUPTED
    assert not got.reply.complete
    assert len(server.requests) == 1


# --- the named path: interrupted -> retry -> next provider -> honest ending ------------------

TASK = "Write the setup notes in notes.md"
LONG_PIECE = "and so on and so forth, " * 20
"""An endless chunk this long reaches the task's cap (2048 tokens × 4) in a few dozen."""
FINISHES = [
    Turn(tool_calls=(call("create_file", path="notes.md", content="# Setup\n"),)),
    Turn(text="Wrote notes.md."),
]


def chain_config(tmp_path: Path, server: LoopbackServer, *names: str, **kw: Any) -> MercuryConfig:
    models = [f"openai/{name}" for name in names]
    return MercuryConfig(workdir=tmp_path, model=models[0], fallbacks=tuple(models[1:]),
                         api_base=server.url, api_key="sk-test", retry_base_s=0.0,
                         retry_max_s=0.05, request_timeout_s=TIMEOUT_S,
                         request_deadline_s=DEADLINE_S, reply_chars_per_token=PER_TOKEN, **kw)


async def bounded_task(config: MercuryConfig, bound_s: float,
                       events: list[AgentEvent]) -> Any:
    task = asyncio.ensure_future(run_new_session(TASK, config, on_event=events.append))
    await asyncio.wait({task}, timeout=bound_s)
    if not task.done():
        task.cancel()
        pytest.fail(f"the task was still running after {bound_s:g}s")
    return task.result()


@pytest.mark.parametrize(
    ("broken", "words"),
    [
        pytest.param(Turn(TEXT, fault=Trickle(SLOW, after_chunks=1)), "request deadline",
                     id="trickling"),
        pytest.param(Turn(fault=Endless(LONG_PIECE)), "characters, more than max_tokens",
                     id="endless"),
    ],
)
async def test_a_hostile_provider_is_retried_then_left_for_the_next(
    tmp_path: Path, loopback_server: MakeServer, broken: Turn, words: str
) -> None:
    server = loopback_server({"a": [broken] * 2, "b": FINISHES})
    events: list[AgentEvent] = []
    config = chain_config(tmp_path, server, "a", "b", retry_attempts=1)
    outcome = await bounded_task(config, 2 * (DEADLINE_S + SLACK_S), events)
    assert len(server.requests_for("a")) == 2, "retried once on the same provider"
    assert outcome.status == "completed", outcome.banner
    assert (tmp_path / "notes.md").read_text() == "# Setup\n"
    (switch,) = [e.text for e in events if isinstance(e, Notice) and "switching" in e.text]
    assert switch.startswith("⚠ openai/a: interrupted: ") and words in switch
    assert switch.endswith("— switching to openai/b and continuing.")


async def test_every_provider_hostile_ends_honestly_naming_each(
    tmp_path: Path, loopback_server: MakeServer
) -> None:
    server = loopback_server({"a": [Turn(fault=Endless(LONG_PIECE))],
                              "b": [Turn(TEXT, fault=Trickle(SLOW, after_chunks=1))]})
    config = chain_config(tmp_path, server, "a", "b", retry_attempts=0)
    outcome = await bounded_task(config, 2 * (DEADLINE_S + SLACK_S), [])
    assert outcome.status == "failed", outcome.banner
    lines = outcome.banner.splitlines()
    assert lines[0].startswith("All LLM providers failed. Last error: interrupted: ")
    assert "request deadline" in lines[0]
    assert outcome.providers["openai/a"].startswith("interrupted: the reply ran past ")
    assert outcome.providers["openai/b"].startswith("interrupted: the reply did not finish")
    assert not (tmp_path / "notes.md").exists()
