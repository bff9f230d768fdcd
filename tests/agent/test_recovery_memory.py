"""The memory governor in the loop: compaction of the list that is sent, model summaries,
honest pressure pauses, and every request under budget while tool results total many MB."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent import memory
from mercury_nb.agent.events import AgentEvent, MemoryPressurePause, Notice, TurnEnded
from mercury_nb.agent.prompts import system_message, user_message
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.compaction import SUMMARY_HEADER, SUMMARY_INSTRUCTIONS
from mercury_nb.contract.recovery.memory_governor import estimate_tokens, usable_budget
from mercury_nb.ledger.access import open_ledger
from mercury_nb.ledger.recorder import TaskRecorder
from mercury_nb.runs.events import RunEvent
from mercury_nb.testing import Turn, call
from mercury_nb.tools.registry import default_registry
from mercury_nb.transport import context_window
from mercury_nb.transport.litellm_model import LiteLLMModel
from mercury_nb.transport.protocol import ModelRequest

QUESTION = "What is in the data files?"
MARKER = "[…compacted: {chars} chars → head+tail."
RESUME = 'Send "continue" and I\'ll pick up right where I left off.'


def cfg(tmp_path: Path, **kw: Any) -> MercuryConfig:
    # results are not cut at the source here: these tests are about compaction itself
    kw.setdefault("tool_result_window_fraction", 1.0)
    kw.setdefault("tool_result_room_fraction", 1.0)
    return MercuryConfig(workdir=tmp_path, retry_base_s=0.0, **kw)


def write_files(root: Path, sizes: list[int]) -> list[str]:
    names = []
    for index, size in enumerate(sizes):
        name = f"data{index}.txt"
        line = f"row {index}: the quick brown fox jumps over the lazy dog\n"
        (root / name).write_text((line * (size // len(line) + 1))[:size])
        names.append(name)
    return names


def reads(names: list[str]) -> list[Turn]:
    return [Turn(tool_calls=(call("read_file", path=name),)) for name in names]


def notices(events: list[AgentEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


def tool_texts(request: ModelRequest) -> list[str]:
    return [m["content"] for m in request.messages if m["role"] == "tool"]


def compaction_numbers(notice: str) -> tuple[int, int]:
    """The ``(before, after)`` character counts of a compaction notice."""
    found = re.search(r"\(([\d,]+) → ([\d,]+) chars\)\.$", notice)
    assert found is not None, notice
    before, after = (int(group.replace(",", "")) for group in found.groups())
    return before, after


def base_tokens(tmp_path: Path) -> int:
    """The estimated prompt of the first request: system prompt, task and tool schemas."""
    start = [system_message(str(tmp_path), "execute"), user_message(QUESTION)]
    return estimate_tokens(start) + memory.tools_tokens(default_registry().schemas(None))


async def test_compaction_replaces_the_messages_the_next_request_sends(
    tmp_path: Path, scripted_model
) -> None:
    names = write_files(tmp_path, [60_000] * 3)
    model = scripted_model([*reads(names), Turn(text="Three files of fox rows.")])
    events: list[AgentEvent] = []
    config = cfg(tmp_path, context_window=40_000, max_output_tokens=4096,
                 compaction_keep_recent=2)
    outcome = await run_new_session(QUESTION, config, model=model, on_event=events.append)

    assert outcome.status == "completed", outcome.banner
    before, after = model.requests[2], model.requests[3]
    assert [len(t) for t in tool_texts(before)] == [60_000, 60_000]
    compacted = tool_texts(after)
    assert all(MARKER.format(chars=60_000) in text for text in compacted[:2])
    assert len(compacted[2]) == 60_000  # the newest result is kept whole
    budget = usable_budget(40_000, 4096)
    assert all(estimate_tokens(r.messages) + memory.tools_tokens(r.tools) <= budget
               for r in model.requests)
    [notice] = [n for n in notices(events) if n.startswith("Compacted")]
    assert notice.startswith(
        "Compacted 2 older messages to head+tail to relieve context pressure ("
    )
    before_chars, after_chars = compaction_numbers(notice)
    assert before_chars - after_chars == 2 * (60_000 - len(compacted[0]))


def _summary_turn(request: ModelRequest) -> Turn:
    assert request.tools == ()
    assert request.messages[0] == {"role": "system", "content": SUMMARY_INSTRUCTIONS}
    assert "data0.txt" in request.messages[1]["content"]
    return Turn(text="Task: say what is in the data files.\nFiles touched: none.")


async def test_summary_replaces_older_turns_when_compaction_is_not_enough(
    tmp_path: Path, scripted_model
) -> None:
    names = write_files(tmp_path, [8_000] * 4)  # under compaction_min_chars: not compactable
    window = 2 * 1024 + base_tokens(tmp_path) + 7_000  # three results fit, four do not
    model = scripted_model([*reads(names), _summary_turn, Turn(text="Fox rows, four files.")])
    events: list[AgentEvent] = []
    config = cfg(tmp_path, context_window=window, max_output_tokens=1024,
                 compaction_keep_recent=2)
    outcome = await run_new_session(QUESTION, config, model=model, on_event=events.append)

    assert outcome.status == "completed", outcome.banner
    sent = model.requests[5].messages
    assert [m["role"] for m in sent] == ["system", "user", "user", "assistant", "tool"]
    assert sent[2]["content"].startswith(SUMMARY_HEADER.format(count=6))
    assert sent[3]["tool_calls"][0]["id"] == sent[4]["tool_call_id"]
    assert "Summarized 6 earlier messages to relieve context pressure." in notices(events)


async def test_a_task_the_window_cannot_hold_fails_without_promising_a_resume(
    tmp_path: Path, scripted_model
) -> None:
    # a tool result that alone is too large is cut to fit (see test_context_fit); what can
    # never be cut is the task itself, so a resume could not fit it either
    model = scripted_model([])
    config = cfg(tmp_path, context_window=20_000, max_output_tokens=4096)
    outcome = await run_new_session(QUESTION + " " + "fox " * 25_000, config, model=model)

    assert outcome.status == "failed", outcome.banner
    lines = outcome.banner.split("\n")
    assert lines[0].startswith(
        "I couldn't finish this one — this model's 20,000-token window cannot hold the task "
        "with the tool definitions (about "
    )
    assert lines[0].endswith(" tokens for a budget of 15,904).")
    assert "Continuing cannot help with the same window. To fix it:" in lines
    assert lines[-2].startswith("- or shorten the task (about 25,")
    assert RESUME not in outcome.banner and "continue" not in outcome.banner.lower()
    assert "the conversation is still too large" not in outcome.banner
    assert model.requests == [] and (outcome.steps, outcome.verdict) == (0, None)
    assert outcome.answer is None


async def test_pressure_after_a_summary_pauses(tmp_path: Path, scripted_model) -> None:
    names = write_files(tmp_path, [8_000, 8_000, 8_000])
    window = 2 * 1024 + base_tokens(tmp_path) + 7_000
    # tool-call arguments are never cut, and the newest turn is never summarized
    big_write = Turn(tool_calls=(call("write_file", path="big.txt", content="x" * 60_000),))
    model = scripted_model([*reads(names), big_write, _summary_turn])
    config = cfg(tmp_path, context_window=window, max_output_tokens=1024,
                 compaction_keep_recent=2)
    events: list[AgentEvent] = []
    outcome = await run_new_session(QUESTION, config, model=model, on_event=events.append)

    assert outcome.status == "paused"
    assert [(e.reason, e.why in outcome.banner) for e in events
            if isinstance(e, MemoryPressurePause)] == [("context", True)]
    assert "too large for the model's context" in outcome.banner
    assert outcome.banner.count("I've paused for now") == 1
    assert RESUME in outcome.banner  # the task and the tools fit: a resume can still succeed


async def test_memory_pressure_pauses_before_asking_the_model(
    tmp_path: Path, scripted_model, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "read_rss_mb", lambda: 5000.0)
    model = scripted_model([])
    events: list[AgentEvent] = []
    outcome = await run_new_session(QUESTION, cfg(tmp_path, memory_limit_mb=100), model=model,
                                    on_event=events.append)

    assert outcome.status == "paused"
    [pressure] = [e for e in events if isinstance(e, MemoryPressurePause)]
    assert pressure.reason == "memory" and pressure.why in outcome.banner
    assert (pressure.rss_mb, pressure.limit_mb) == (5000.0, 100)
    assert 0 < pressure.prompt_tokens < pressure.budget_tokens  # memory, not the context
    assert outcome.banner == (
        "I've paused for now — the kernel is using 5000 MB of memory, over its 100 MB limit, "
        "even after compacting the conversation. Free some memory in the kernel (or raise "
        f"MERCURY_MEMORY_LIMIT_MB). {RESUME}"
    )
    assert outcome.steps == 0


async def test_the_pause_is_recorded_with_the_numbers_it_paused_on(
    home: Path, tmp_path: Path, scripted_model, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "read_rss_mb", lambda: 5000.0)
    config = cfg(tmp_path, memory_limit_mb=100, home=home)
    handle = open_ledger(home)
    recorder = TaskRecorder(handle.writer, "t1", QUESTION, config)
    outcome = await run_new_session(QUESTION, config, model=scripted_model([]), task_id="t1",
                                    on_event=recorder.wrap(lambda event: None))
    handle.flush()

    [paused] = [RunEvent.from_record(row) for row in handle.ledger.events("t1")
                if row.kind == "memory-pressure-pause"]
    assert paused.kind == "memory-pressure-pause"
    assert {key: paused.data[key] for key in ("reason", "rss_mb", "limit_mb")} == {
        "reason": "memory", "rss_mb": 5000.0, "limit_mb": 100}
    assert paused.data["why"] in outcome.banner
    assert paused.data["prompt_tokens"] < paused.data["budget_tokens"]


async def test_memory_pressure_before_any_turn_records_no_turn_verdict(
    tmp_path: Path, scripted_model, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the governor paused before the first request: no turn ran, so none ended interrupted
    monkeypatch.setattr(memory, "read_rss_mb", lambda: 5000.0)
    events: list[AgentEvent] = []
    outcome = await run_new_session(QUESTION, cfg(tmp_path, memory_limit_mb=100),
                                    model=scripted_model([]), on_event=events.append)

    assert outcome.status == "paused"
    assert (outcome.verdict, outcome.steps) == (None, 0)
    assert [e.verdict for e in events if isinstance(e, TurnEnded)] == [None]


async def test_memory_pressure_after_a_turn_keeps_its_verdict_and_steps(
    tmp_path: Path, scripted_model, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two steps use up the budget (a turn that ended steps-exhausted), then the kernel's
    # memory outgrows its limit before the continuation's first request
    readings = iter([50.0, 50.0])
    monkeypatch.setattr(memory, "read_rss_mb", lambda: next(readings, 5000.0))
    names = write_files(tmp_path, [100, 100])
    model = scripted_model(reads(names))
    events: list[AgentEvent] = []
    config = cfg(tmp_path, memory_limit_mb=100, max_steps=2)
    outcome = await run_new_session(QUESTION, config, model=model, on_event=events.append)

    assert outcome.status == "paused", outcome.banner
    assert "over its 100 MB limit" in outcome.banner
    assert len(model.requests) == 2
    assert (outcome.verdict, outcome.steps) == ("steps-exhausted", 2)
    assert [e.verdict for e in events if isinstance(e, TurnEnded)] == ["steps-exhausted", None]


async def test_memory_pressure_relieved_by_compaction_goes_on(
    tmp_path: Path, scripted_model, monkeypatch: pytest.MonkeyPatch
) -> None:
    readings: Iterator[float] = iter([50.0, 50.0, 50.0, 5000.0])
    monkeypatch.setattr(memory, "read_rss_mb", lambda: next(readings, 50.0))
    names = write_files(tmp_path, [60_000] * 3)
    model = scripted_model([*reads(names), Turn(text="Fox rows.")])
    events: list[AgentEvent] = []
    config = cfg(tmp_path, memory_limit_mb=100, compaction_keep_recent=2)
    outcome = await run_new_session(QUESTION, config, model=model, on_event=events.append)

    assert outcome.status == "completed", outcome.banner
    assert all(MARKER.format(chars=60_000) in t for t in tool_texts(model.requests[3])[:2])
    [notice] = [n for n in notices(events) if n.startswith("Compacted")]
    assert notice.startswith("Compacted 2 older messages to head+tail to relieve memory pressure (")


async def test_every_request_stays_under_budget_while_tool_results_total_many_mb(
    tmp_path: Path, loopback_server, litellm_module
) -> None:
    sizes = [1_000_000, 1_300_000, 1_600_000, 1_100_000, 1_500_000, 1_200_000]
    names = write_files(tmp_path, sizes)
    server = loopback_server([*reads(names), Turn(text="Six files of fox rows.")])
    model = LiteLLMModel("openai/mercury-test", api_base=server.url, api_key="sk-test",
                         timeout_s=60)
    window, reserve = 600_000, 8192
    config = cfg(tmp_path, context_window=window, max_output_tokens=reserve,
                 read_file_max_chars=2_000_000, compaction_keep_recent=2)
    outcome = await run_new_session(QUESTION, config, model=model)

    assert outcome.status == "completed", outcome.banner
    budget = usable_budget(window, reserve)
    bodies = server.requests
    assert len(bodies) == 7
    for body in bodies:
        prompt = estimate_tokens(body["messages"]) + memory.tools_tokens(tuple(body["tools"]))
        assert prompt <= budget
        assert sum(len(m.get("content") or "") for m in body["messages"]) <= budget * 4
    # each result reached the model whole in the request right after its read: many MB
    whole = [len(body["messages"][-1]["content"]) for body in bodies[1:]]
    assert whole == sizes
    assert sum(whole) > 7_000_000
    last = bodies[-1]["messages"]
    assert any(MARKER.format(chars=1_000_000) in str(m.get("content")) for m in last)


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        pytest.param({"max_input_tokens": 128_000, "max_tokens": 16_384}, 128_000, id="input"),
        pytest.param({"max_input_tokens": None, "max_tokens": 8_192}, 8_192, id="max-tokens"),
        pytest.param({"max_input_tokens": 0, "max_tokens": None}, None, id="zero"),
        pytest.param(LookupError("not mapped"), None, id="unknown-model"),
    ],
)
def test_litellm_context_window_reads_model_info(info: Any, expected: int | None) -> None:
    class FakeLitellm:
        @staticmethod
        def get_model_info(name: str) -> dict[str, Any]:
            if isinstance(info, Exception):
                raise info
            return info

    assert context_window.litellm_context_window(FakeLitellm, "openai/some-model") == expected


def test_litellm_context_window_never_asks_a_server_provider() -> None:
    class Refuses:
        @staticmethod
        def get_model_info(name: str) -> dict[str, Any]:
            raise AssertionError("asked litellm about a server-queried provider")

    assert context_window.litellm_context_window(Refuses, "ollama/llama3") is None


async def test_context_window_comes_from_litellm_when_it_knows_the_model(
    tmp_path: Path, litellm_module, scripted_model
) -> None:
    config = cfg(tmp_path, context_window=50_000)
    known = LiteLLMModel("openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1")
    unknown = LiteLLMModel("openai/mercury-unknown-model", api_base="http://127.0.0.1:9/v1")
    assert await context_window.context_window_of(known, config) == 128_000
    assert await context_window.context_window_of(unknown, config) == 50_000
    assert await context_window.context_window_of(scripted_model([]), config) == 50_000
    assert await context_window.context_window_of(scripted_model([]), cfg(tmp_path)) is None


def test_rss_is_read_from_the_process() -> None:
    rss = memory.read_rss_mb()
    assert rss is not None and 1 < rss < 1_000_000


async def test_a_summarys_tokens_count_toward_the_budget(tmp_path: Path, scripted_model) -> None:
    names = write_files(tmp_path, [8_000] * 4)  # as above: the fifth request needs a summary

    def summary_with_usage(request: ModelRequest) -> Turn:
        return replace(_summary_turn(request), usage=(5000, 300))

    window = 2 * 1024 + base_tokens(tmp_path) + 7_000
    model = scripted_model([*reads(names), summary_with_usage])  # never a sixth request
    config = cfg(tmp_path, context_window=window, max_output_tokens=1024,
                 compaction_keep_recent=2, max_tokens=5000)
    outcome = await run_new_session(QUESTION, config, model=model)

    assert outcome.status == "paused", outcome.banner
    assert len(model.requests) == 5  # the four reads and the summary request
    assert outcome.banner.startswith("I've paused — budget reached: 5.3k of 5k tokens used")
    assert outcome.usage["scripted/test"].total_tokens == 5300
