"""Token usage reported in the stream is summed per model into TaskOutcome.usage."""

from __future__ import annotations

import json
from pathlib import Path

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import Turn, call
from mercury_nb.transport.openai_model import OpenAIModel


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)  # the loopback server's estimate


async def test_usage_is_summed_over_the_requests_of_a_task(tmp_path: Path, loopback_server) -> None:
    list_call = call("list_dir", path=".")
    server = loopback_server([Turn(tool_calls=(list_call,)), Turn("Nothing here yet.")])
    model = OpenAIModel("openai/m", "m", server.url, None, 30.0)
    config = MercuryConfig(workdir=tmp_path, mode="chat", model="openai/m")
    outcome = await run_new_session("What is in this folder?", config, model=model)
    assert outcome.status == "completed", outcome.banner
    assert list(outcome.usage) == ["openai/m"]
    used = outcome.usage["openai/m"]
    prompts = [_tokens(json.dumps(body["messages"])) for body in server.requests]
    completions = [_tokens(list_call.name + list_call.arguments_json),
                   _tokens("Nothing here yet.")]
    assert (used.prompt_tokens, used.completion_tokens) == (sum(prompts), sum(completions))
    assert used.total_tokens == sum(prompts) + sum(completions)


async def test_a_model_that_reports_nothing_adds_nothing(tmp_path: Path, scripted_model) -> None:
    model = scripted_model([Turn("Hi.")])
    config = MercuryConfig(workdir=tmp_path, mode="chat")
    outcome = await run_new_session("Say hi.", config, model=model)
    assert outcome.usage == {}
