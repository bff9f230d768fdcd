"""The live stall watchdog in the loop: pulses, hard stalls into retry, commands as progress."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import AgentEvent, Notice, Pulse, StepStarted, TaskFinished
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.runs.resolve import with_model
from mercury_nb.testing import Stall, Turn, call
from mercury_nb.transport.litellm_model import LiteLLMModel

STALLED = "Task stalled 0 minutes with no progress (was: "


def cfg(tmp_path: Path, **kw: Any) -> MercuryConfig:
    return MercuryConfig(permissions="auto", workdir=tmp_path, retry_base_s=0.0, **kw)


def pulses(events: list[AgentEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, Pulse)]


def notices(events: list[AgentEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


async def test_stalled_loopback_stream_is_aborted_and_the_retry_completes(
    tmp_path: Path, loopback_server, litellm_module
) -> None:
    server = loopback_server(
        [Turn(text="Four.", fault=Stall(seconds=60)), Turn(text="2 + 2 is 4.")]
    )
    model = LiteLLMModel("openai/mercury-test", api_base=server.url, api_key="sk-test",
                         timeout_s=30)
    events: list[AgentEvent] = []
    # hard 3 s: the retry (litellm over loopback HTTP) must start streaming within it even
    # on a loaded machine; at 700 ms a slow retry stalled a second time
    config = with_model(cfg(tmp_path, stall_soft_ms=100, stall_hard_ms=3000), model)
    outcome = await run_new_session("What is 2+2?", config, model=model, on_event=events.append)

    assert outcome.status == "completed", outcome.banner
    assert outcome.answer == "2 + 2 is 4."
    assert len(server.requests) == 2
    # the stall is reported, never silent: a notice and the provider ledger name it
    stall_notices = [n for n in notices(events) if n.startswith("Task stalled")]
    assert stall_notices == [f"{STALLED}waiting for the model)"]
    assert outcome.providers == {"openai/mercury-test": f"stalled: {stall_notices[0]}"}
    # the soft threshold pulsed once in the silent window, before the hard one cut it
    cut = events.index(Notice(stall_notices[0], "stall"))
    # ...saying how full the context is (litellm knows the model's window)
    [pulse] = [e for e in events[:cut] if isinstance(e, Pulse)]
    assert pulse.context is not None
    assert pulse.text == f"waiting for the model · 0 s · context {pulse.context}%"
    # the retry re-sent the same step: nothing was streamed before the stall
    assert server.requests[1]["messages"] == server.requests[0]["messages"]


async def test_stall_mid_text_drops_the_partial_text_and_asks_again(
    tmp_path: Path, scripted_model
) -> None:
    model = scripted_model(
        [
            Turn(text="The answer is coming", fault=Stall(seconds=60, after_chunks=1)),
            Turn(text="2 + 2 is 4."),
        ]
    )
    events: list[AgentEvent] = []
    config = cfg(tmp_path, stall_soft_ms=50, stall_hard_ms=300)
    outcome = await run_new_session("What is 2+2?", config, model=model, on_event=events.append)

    assert outcome.status == "completed", outcome.banner
    assert outcome.answer == "2 + 2 is 4."
    assert f"{STALLED}waiting for the model)" in notices(events)
    assert model.requests[1].messages == model.requests[0].messages


async def test_stall_on_every_provider_fails_honestly_naming_the_stall(
    tmp_path: Path, scripted_model
) -> None:
    model = scripted_model([Turn(text="never", fault=Stall(seconds=60))])
    config = cfg(tmp_path, stall_soft_ms=50, stall_hard_ms=200, retry_attempts=0)
    outcome = await run_new_session("What is 2+2?", config, model=model)
    assert outcome.status == "failed"
    assert outcome.answer is None
    assert outcome.banner.startswith(
        f"All LLM providers failed. Last error: stalled: {STALLED}waiting for the model)"
    )


async def test_silent_command_pulses_once_per_window_and_is_never_hard_stalled(
    tmp_path: Path, scripted_model
) -> None:
    model = scripted_model(
        [
            Turn(tool_calls=(call("run_command", command="sleep 1"),)),
            Turn(text="The pause is over."),
        ]
    )
    events: list[AgentEvent] = []
    config = cfg(tmp_path, stall_soft_ms=100, stall_hard_ms=400, mode="chat")
    outcome = await run_new_session("Wait a second.", config, model=model, on_event=events.append)

    assert outcome.status == "completed", outcome.banner
    running = [p for p in pulses(events) if p.startswith("running ")]
    assert len(running) == 1
    assert running[0].startswith("running sleep 1 · ")
    assert running[0].endswith("s")
    assert not any(n.startswith("Task stalled") for n in notices(events))
    assert [e.exit_code for e in outcome.evidence] == [0]


async def test_silent_command_is_ended_by_its_own_timeout_not_the_watchdog(
    tmp_path: Path, scripted_model
) -> None:
    model = scripted_model(
        [
            Turn(tool_calls=(call("run_command", command="sleep 30", timeout_s=0.5),)),
            Turn(text="It timed out."),
        ]
    )
    events: list[AgentEvent] = []
    config = cfg(tmp_path, stall_soft_ms=100, stall_hard_ms=200, mode="chat")
    outcome = await run_new_session("Wait for it.", config, model=model, on_event=events.append)

    assert outcome.status == "completed", outcome.banner
    assert [e.timed_out for e in outcome.evidence] == [True]
    assert len([p for p in pulses(events) if "running sleep 30" in p]) == 1
    assert not any(n.startswith("Task stalled") for n in notices(events))


async def test_stop_during_a_watched_request_is_a_stop_not_a_stall(
    tmp_path: Path, scripted_model
) -> None:
    model = scripted_model([Turn(text="never", fault=Stall(seconds=60))])
    started = asyncio.Event()
    events: list[AgentEvent] = []

    def sink(event: AgentEvent) -> None:
        events.append(event)
        if isinstance(event, StepStarted):
            started.set()

    config = cfg(tmp_path, stall_soft_ms=60_000, stall_hard_ms=120_000)
    task = asyncio.create_task(run_new_session("What is 2+2?", config, model=model, on_event=sink))
    await started.wait()
    while not model.requests:  # the stream is open and stalled
        await asyncio.sleep(0)
    task.cancel()
    outcome = await task
    assert outcome.status == "aborted"
    assert isinstance(events[-1], TaskFinished)
    assert not any(n.startswith("Task stalled") for n in notices(events))


@pytest.mark.parametrize(
    ("soft_ms", "hard_ms"),
    [
        pytest.param(50, 100_000, id="hard-threshold-far-away"),
        pytest.param(50, 60, id="hard-threshold-passed-while-the-command-runs"),
    ],
)
async def test_pulse_reaches_the_plain_text_view(
    tmp_path: Path, scripted_model, soft_ms: int, hard_ms: int
) -> None:
    import io

    from mercury_nb.ui.plain import PlainView

    model = scripted_model(
        [
            Turn(tool_calls=(call("run_command", command="sleep 0.5"),)),
            Turn(text="Done waiting."),
        ]
    )
    out = io.StringIO()
    view = PlainView(max_updates_per_s=10, attached=True, stream=out)
    config = cfg(tmp_path, stall_soft_ms=soft_ms, stall_hard_ms=hard_ms, mode="chat")
    outcome = await run_new_session("Wait a moment.", config, model=model, on_event=view.on_event)
    assert outcome.status == "completed", outcome.banner
    lines = out.getvalue().splitlines()
    pulse_lines = [line for line in lines if line.startswith("running sleep 0.5")]
    assert len(pulse_lines) == 1
    assert not any(line.startswith("Task stalled") for line in lines)
