"""Tool output fits the context window, over real HTTP (litellm -> loopback) (issue 11.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mercury_nb.agent.events import AgentEvent, Notice
from mercury_nb.agent.memory import tools_tokens
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.memory_governor import estimate_tokens
from mercury_nb.testing import LoopbackServer, Turn, call
from mercury_nb.testing.script import HttpError
from mercury_nb.transport.litellm_model import LiteLLMModel
from mercury_nb.transport.protocol import ModelRequest

LLAMA_OVERFLOW = "the request exceeds the available context size ({n} tokens), try increasing it"


def _model(server: Any, name: str = "openai/local") -> LiteLLMModel:
    return LiteLLMModel(name, api_base=server.url, api_key="sk-test", timeout_s=30)


def _files(root: Path, count: int, size: int) -> list[str]:
    names = []
    for index in range(count):
        line = f"file {index}: the quick brown fox jumps over the lazy dog, row after row\n"
        (root / f"part{index}.txt").write_text((line * (size // len(line) + 1))[:size])
        names.append(f"part{index}.txt")
    return names


def _request_tokens(body: dict[str, Any]) -> int:
    """The prompt estimate the budget is kept by: messages plus the tool schemas."""
    return estimate_tokens(body["messages"]) + tools_tokens(tuple(body.get("tools") or ()))


async def test_six_100kb_reads_fit_a_16k_window(tmp_path: Path, loopback_server) -> None:
    names = _files(tmp_path, 6, 100_000)
    server = loopback_server([
        *[Turn(tool_calls=(call("read_file", path=name),)) for name in names],
        Turn(text="Six parts of fox rows."),
    ])
    config = MercuryConfig.load({"MERCURY_CONTEXT_WINDOW": "16000"}, workdir=tmp_path,
                                mode="chat", model="openai/local")
    outcome = await run_new_session("What is in the part files?", config, model=_model(server))

    assert outcome.status == "completed", outcome.banner
    assert len(server.requests) == 7
    for body in server.requests:
        assert _request_tokens(body) + body["max_tokens"] <= 16_000
    assert {body["max_tokens"] for body in server.requests} == {4000}
    last = server.requests[-1]["messages"]
    results = [m["content"] for m in last if m["role"] == "tool"]
    assert len(results) == 6 and all("offset=" in text or "compacted" in text
                                     for text in results)


def _llama(n_ctx: int, turns: list[Turn]) -> list[Any]:
    """Turns that behave like llama.cpp with ``n_ctx``: a request whose prompt (counted
    a third above our estimate, as a real tokenizer may) plus max_tokens does not fit is
    refused with llama.cpp's error; otherwise the next turn is played."""
    queue = list(turns)
    served: list[Any] = []

    def serve(request: ModelRequest) -> Turn:
        tokens = int(estimate_tokens(request.messages) * 4 / 3) + request.max_tokens
        if tokens > n_ctx:
            return Turn(fault=HttpError(400, message=LLAMA_OVERFLOW.format(n=n_ctx),
                                        extra=(("type", "exceed_context_size_error"),
                                               ("n_ctx", n_ctx))))
        return queue.pop(0)

    served.extend(serve for _ in range(len(turns) * 4))
    return served


async def test_a_llama_cpp_overflow_is_absorbed_not_failed(tmp_path: Path, loopback_server) -> None:
    names = _files(tmp_path, 4, 30_000)
    turns = [*[Turn(tool_calls=(call("read_file", path=n),)) for n in names],
             Turn(text="Four parts.")]
    # the server claims a large window but really has 8192 tokens (a real case)
    props = {"/props": {"default_generation_settings": {"n_ctx": 65536}}}
    events: list[AgentEvent] = []
    config = MercuryConfig(workdir=tmp_path, mode="chat", model="openai/local",
                           retry_attempts=0)
    with LoopbackServer(_llama(8192, turns), routes=props) as server:
        outcome = await run_new_session("What is in the parts?", config, model=_model(server),
                                        on_event=events.append)

    assert outcome.status == "completed", outcome.banner
    notes = [e.text for e in events if isinstance(e, Notice)]
    assert any(n.startswith("The provider said the request exceeds its 8,192-token context")
               for n in notes)
    assert not any("switching to" in n or "failed" in n for n in notes)
    caps = [body["max_tokens"] for body in server.requests]
    assert caps[0] == 16384 and caps[-1] == 2048  # the window's fraction, never halved blindly
    assert "/props" in server.get_requests
    assert server.errors == []


async def test_an_overflow_that_cannot_be_fixed_fails_honestly(
    tmp_path: Path, loopback_server
) -> None:
    error = HttpError(400, message="This model's maximum context length is 4096 tokens. "
                      "However, your messages resulted in 9000 tokens.",
                      code="context_length_exceeded")
    server = loopback_server([Turn(fault=error)])
    config = MercuryConfig(workdir=tmp_path, mode="chat", model="openai/local",
                           context_window=32_000, retry_attempts=0)
    outcome = await run_new_session("Summarize this: " + "lorem ipsum " * 3000, config,
                                    model=_model(server))

    # the task itself cannot be cut, so no resume could fit it: a failure, not a pause
    assert outcome.status == "failed", outcome.banner
    assert outcome.banner.startswith(
        "I couldn't finish this one — this model's 4,096-token window cannot hold the task "
        "with the tool definitions")
    assert "Send \"continue\"" not in outcome.banner
    assert "All LLM providers failed" not in outcome.banner
    assert len(server.requests) == 1  # no pointless retries


async def test_the_window_is_asked_of_the_server(tmp_path: Path, loopback_server) -> None:
    llama = loopback_server([Turn(text="hi")],
                            routes={"/props": {"default_generation_settings": {"n_ctx": 4096}}})
    vllm = loopback_server([Turn(text="hi")],
                           routes={"/v1/models": {"data": [{"id": "qwen", "max_model_len": 6000}]}})
    silent = loopback_server([Turn(text="hi")])
    for server, name, cap in ((llama, "openai/llama", 1024), (vllm, "openai/qwen", 1500),
                              (silent, "openai/silent", 2048)):
        config = MercuryConfig(workdir=tmp_path, mode="chat", model=name)
        outcome = await run_new_session("hello", config, model=_model(server, name))
        assert outcome.status == "completed", outcome.banner
        assert server.requests[0]["max_tokens"] == cap, name
