"""The memory governor: token estimate, budget, and the compact → summarize → pause sequence."""

from collections.abc import Sequence
from typing import Any

import pytest

from mercury_nb.contract.banners import banner_text
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import Paused
from mercury_nb.contract.recovery.memory_governor import (
    Compact,
    GovernorDecision,
    GovernorState,
    NoPressure,
    PauseForPressure,
    PressureObservation,
    Summarize,
    estimate_tokens,
    pressure_pause,
    pressures,
    step_governor,
    usable_budget,
)

CONFIG = MercuryConfig()

OK = PressureObservation(prompt_tokens=1_000, budget_tokens=90_000, rss_mb=500.0, limit_mb=2_000)
CTX = PressureObservation(prompt_tokens=120_000, budget_tokens=90_000, rss_mb=500.0, limit_mb=2_000)
MEM = PressureObservation(prompt_tokens=1_000, budget_tokens=90_000, rss_mb=2_500.0, limit_mb=2_000)
BOTH = PressureObservation(
    prompt_tokens=120_000, budget_tokens=90_000, rss_mb=2_500.0, limit_mb=2_000
)


# --- estimate and budget -----------------------------------------------------------------
def call(arguments: str) -> dict[str, Any]:
    return {"id": "c1", "type": "function", "function": {"name": "write", "arguments": arguments}}


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        pytest.param([], 3, id="empty-is-reply-priming"),
        pytest.param(
            [{"role": "user", "content": "abcd" * 100}], 3 + 4 + 100, id="chars-over-four"
        ),
        pytest.param([{"role": "user", "content": "abcde"}], 3 + 4 + 2, id="rounds-up"),
        pytest.param(
            [{"role": "assistant", "content": None, "tool_calls": [call("x" * 3995)]}],
            3 + 4 + 1000 + 8,
            id="tool-call-name-and-arguments-count",
        ),
        pytest.param(
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "abcd" * 10},
                        {"type": "image_url", "image_url": {"url": "data:,"}},
                    ],
                }
            ],
            3 + 4 + 10 + 256,
            id="text-parts-and-a-flat-image-cost",
        ),
        pytest.param(
            [{"role": "user", "content": "abcd"}, {"role": "tool", "content": "abcd" * 2}],
            3 + (4 + 1) + (4 + 2),
            id="per-message-overhead",
        ),
    ],
)
def test_estimate_tokens(messages: Sequence[dict[str, Any]], expected: int) -> None:
    assert estimate_tokens(messages) == expected


@pytest.mark.parametrize(
    ("window", "reserve", "expected"),
    [
        pytest.param(128_000, 32_768, 95_232, id="window-minus-reserve"),
        pytest.param(200_000, 0, 200_000, id="no-reserve"),
        pytest.param(8_192, 32_768, 4_096, id="reserve-capped-at-half-a-small-window"),
        pytest.param(0, 4_096, 0, id="no-window"),
    ],
)
def test_usable_budget(window: int, reserve: int, expected: int) -> None:
    assert usable_budget(window, reserve) == expected


@pytest.mark.parametrize(
    ("observation", "config", "expected"),
    [
        pytest.param(OK, CONFIG, (), id="none"),
        pytest.param(CTX, CONFIG, ("context",), id="context"),
        pytest.param(MEM, CONFIG, ("memory",), id="memory"),
        pytest.param(BOTH, CONFIG, ("memory", "context"), id="both-memory-first"),
        pytest.param(
            PressureObservation(90_000, 90_000, None, None), CONFIG, (), id="at-budget-is-not-over"
        ),
        pytest.param(
            PressureObservation(1, 10, rss_mb=None, limit_mb=100), CONFIG, (), id="unknown-rss"
        ),
        pytest.param(
            PressureObservation(1, 10, rss_mb=900.0, limit_mb=None), CONFIG, (), id="no-limit"
        ),
        pytest.param(
            PressureObservation(1, 10, rss_mb=900.0, limit_mb=None),
            MercuryConfig(memory_limit_mb=512),
            ("memory",),
            id="limit-from-config",
        ),
    ],
)
def test_pressures(
    observation: PressureObservation, config: MercuryConfig, expected: tuple[str, ...]
) -> None:
    assert pressures(observation, config) == expected


# --- the sequence --------------------------------------------------------------------------
def run(observations: Sequence[PressureObservation]) -> list[GovernorDecision]:
    state = GovernorState()
    decisions: list[GovernorDecision] = []
    for observation in observations:
        state, decision = step_governor(state, observation, CONFIG)
        decisions.append(decision)
    return decisions


def kinds(decisions: Sequence[GovernorDecision]) -> list[str]:
    out: list[str] = []
    for decision in decisions:
        match decision:
            case NoPressure():
                out.append("ok")
            case Compact(reason=reason):
                out.append(f"compact:{reason}")
            case Summarize(reason=reason):
                out.append(f"summarize:{reason}")
            case PauseForPressure(reason=reason):
                out.append(f"pause:{reason}")
    return out


@pytest.mark.parametrize(
    ("observations", "expected"),
    [
        pytest.param([OK, OK], ["ok", "ok"], id="no-pressure"),
        pytest.param(
            [MEM, MEM],
            ["compact:memory", "pause:memory"],
            id="memory-compact-then-second-consecutive-pressure-pauses",
        ),
        pytest.param(
            [CTX, CTX, CTX],
            ["compact:context", "summarize:context", "pause:context"],
            id="context-compact-then-summarize-then-pause",
        ),
        pytest.param(
            [BOTH, BOTH],
            ["compact:memory", "pause:memory"],
            id="both-pressures-name-memory",
        ),
        pytest.param(
            [CTX, OK, CTX, OK, MEM],
            ["compact:context", "ok", "compact:context", "ok", "compact:memory"],
            id="pressure-free-check-resets-after-compact",
        ),
        pytest.param(
            [CTX, CTX, OK, CTX, CTX],
            ["compact:context", "summarize:context", "ok", "compact:context", "summarize:context"],
            id="pressure-free-check-resets-after-summarize",
        ),
        pytest.param(
            [CTX, MEM],
            ["compact:context", "pause:memory"],
            id="memory-after-a-context-compaction-pauses",
        ),
        pytest.param(
            [MEM, CTX, CTX],
            ["compact:memory", "summarize:context", "pause:context"],
            id="context-after-a-memory-compaction-summarizes",
        ),
        pytest.param(
            [MEM, MEM, MEM, OK],
            ["compact:memory", "pause:memory", "pause:memory", "ok"],
            id="pause-repeats-while-pressure-lasts",
        ),
    ],
)
def test_governor_sequence(observations: list[PressureObservation], expected: list[str]) -> None:
    assert kinds(run(observations)) == expected


def test_state_after_relief_is_clear() -> None:
    state, _ = step_governor(GovernorState(), CTX, CONFIG)
    assert state == GovernorState("compacted")
    state, _ = step_governor(state, OK, CONFIG)
    assert state == GovernorState()


# --- honest pause texts ----------------------------------------------------------------------
def test_memory_pause_text() -> None:
    pause = pressure_pause(MEM, CONFIG)
    assert pause.reason == "memory"
    assert banner_text(Paused(pause.why), []) == (
        "I've paused for now — the kernel is using 2500 MB of memory, over its 2000 MB "
        "limit, even after compacting the conversation. Free some memory in the kernel "
        '(or raise MERCURY_MEMORY_LIMIT_MB). Send "continue" and I\'ll pick up right '
        "where I left off."
    )


def test_context_pause_text() -> None:
    pause = pressure_pause(CTX, CONFIG)
    assert pause.reason == "context"
    assert banner_text(Paused(pause.why), []) == (
        "I've paused for now — the conversation is still too large for the model's context "
        "(about 120,000 tokens for a budget of 90,000), even after compacting the "
        "conversation. Switch to a model with a larger context window if you can. "
        'Send "continue" and I\'ll pick up right where I left off.'
    )


def test_pause_for_both_names_both() -> None:
    [_, pause] = run([BOTH, BOTH])
    assert isinstance(pause, PauseForPressure)
    assert "2500 MB of memory" in pause.why
    assert "about 120,000 tokens" in pause.why


@pytest.mark.parametrize(
    "observation",
    [
        pytest.param(PressureObservation(5, 0), id="zero-budget"),
        pytest.param(PressureObservation(5, -10, rss_mb=0.0, limit_mb=16), id="negative-budget"),
    ],
)
def test_degenerate_budgets_pause_instead_of_crashing(observation: PressureObservation) -> None:
    assert kinds(run([observation] * 4)) == [
        "compact:context",
        "summarize:context",
        "pause:context",
        "pause:context",
    ]
