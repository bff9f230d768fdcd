"""Table tests of the context-window rules: overflow parsing, retry-or-pause, caps, shrinking."""

from __future__ import annotations

import pytest

from mercury_nb.contract.banners import banner_text
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import Paused
from mercury_nb.contract.recovery.compaction import compaction_marker
from mercury_nb.contract.recovery.context_budget import (
    ContextOverflow,
    OverflowObservation,
    OverflowState,
    PauseForOverflow,
    SendShrunk,
    ShrinkAndRetry,
    ShrinkObservation,
    ShrunkDecision,
    output_cap,
    parse_context_overflow,
    shrink_floor,
    shrink_to_fit,
    step_overflow,
    step_overflow_shrunk,
    tool_result_chars,
)
from mercury_nb.contract.recovery.memory_governor import estimate_tokens

CONFIG = MercuryConfig()


@pytest.mark.parametrize(
    ("status", "kind", "message", "expected"),
    [
        pytest.param(400, "bad_request",
                     "This model's maximum context length is 16385 tokens. However, your "
                     "messages resulted in 20012 tokens. Please reduce the length of the "
                     "messages. (context_length_exceeded)",
                     ContextOverflow(16385, 20012), id="openai"),
        pytest.param(400, "bad_request",
                     "the request exceeds the available context size (8192 tokens), try "
                     "increasing it", ContextOverflow(8192, None), id="llama.cpp"),
        pytest.param(400, "bad_request",
                     "This model's maximum context length is 8192 tokens. However, you "
                     "requested 9000 tokens (7000 in the messages, 2000 in the completion). "
                     "Please reduce the length of the messages or completion.",
                     ContextOverflow(8192, 7000), id="vllm"),
        pytest.param(400, "bad_request", "prompt is too long: 210345 tokens > 200000 maximum",
                     ContextOverflow(200000, 210345), id="anthropic"),
        pytest.param(None, "context_window", "ContextWindowExceededError: too big",
                     ContextOverflow(None, None), id="litellm-class"),
        pytest.param(429, "rate_limit", "tokens per minute exceeded: context", None,
                     id="rate-limit"),
        pytest.param(500, "server_error", "context length exceeded", None, id="server-error"),
        pytest.param(400, "bad_request", "max_tokens is too large: 32768", None,
                     id="output-limit-is-not-overflow"),
        pytest.param(401, "auth", "invalid api key", None, id="auth"),
    ],
)
def test_parse_context_overflow(
    status: int | None, kind: str, message: str, expected: ContextOverflow | None
) -> None:
    assert parse_context_overflow(status, kind, message) == expected


def _observe(window: int | None, prompt: int | None, estimate: int = 10_000,
             known: int | None = None) -> OverflowObservation:
    return OverflowObservation(ContextOverflow(window, prompt), estimate, known, 2048)


@pytest.mark.parametrize(
    ("state", "observation", "expected"),
    [
        pytest.param(OverflowState(), _observe(8192, None),
                     ShrinkAndRetry(8192, int((8192 - 2048) * 0.9)), id="window-named"),
        pytest.param(OverflowState(), _observe(8192, 12_000),
                     ShrinkAndRetry(8192, int((8192 - 2048) * 0.9 / 1.2)),
                     id="provider-counts-more-tokens"),
        pytest.param(OverflowState(), _observe(None, None), ShrinkAndRetry(None, 7500),
                     id="no-numbers-shrinks-a-quarter"),
        pytest.param(OverflowState(), _observe(None, None, known=16_000),
                     ShrinkAndRetry(16_000, int((16_000 - 2048) * 0.9)), id="known-window"),
        pytest.param(OverflowState(1), _observe(None, None), ShrinkAndRetry(None, 5625),
                     id="second-try-shrinks-more"),
    ],
)
def test_overflow_is_retried_smaller(
    state: OverflowState, observation: OverflowObservation, expected: ShrinkAndRetry
) -> None:
    new_state, decision = step_overflow(state, observation, CONFIG)
    assert decision == expected
    assert new_state.retries == state.retries + 1


def test_overflow_pauses_honestly_when_retries_are_used_up() -> None:
    state = OverflowState(CONFIG.context_overflow_retries)
    _, decision = step_overflow(state, _observe(8192, None), CONFIG)
    assert isinstance(decision, PauseForOverflow)
    banner = banner_text(Paused(decision.why), [])
    assert banner.startswith(
        "I've paused for now — the model still reports the request does not fit its "
        "8,192-token context after shrinking the conversation 3 times"
    )
    assert banner.endswith('Send "continue" and I\'ll pick up right where I left off.')


NOTHING_LEFT_TO_CUT = PauseForOverflow(
    "the model still reports the request does not fit its 4,096-token context after "
    "shrinking the conversation 1 time (about 9,000 tokens were sent). Switch to a model "
    "with a larger context window if you can (or set MERCURY_CONTEXT_WINDOW)"
)


def _shrunk(cut: int, after: int, target: int = 3000) -> ShrinkObservation:
    return ShrinkObservation(_observe(4096, 9000, estimate=9000), cut, after, target)


@pytest.mark.parametrize(
    ("observation", "expected"),
    [
        pytest.param(_shrunk(cut=0, after=9000), NOTHING_LEFT_TO_CUT,
                     id="nothing-cut-still-over-pauses"),
        pytest.param(_shrunk(cut=0, after=3001), NOTHING_LEFT_TO_CUT,
                     id="nothing-cut-one-token-over-pauses"),
        pytest.param(_shrunk(cut=0, after=3000), SendShrunk(),
                     id="nothing-cut-at-target-is-sent"),
        pytest.param(_shrunk(cut=0, after=1200), SendShrunk(),
                     id="nothing-cut-already-fits-is-sent"),
        pytest.param(_shrunk(cut=2, after=2900), SendShrunk(), id="cut-and-fits-is-sent"),
        pytest.param(_shrunk(cut=1, after=5000), SendShrunk(),
                     id="cut-but-still-over-is-sent-again"),
    ],
)
def test_a_shrunk_prompt_is_sent_unless_nothing_is_left_to_cut(
    observation: ShrinkObservation, expected: ShrunkDecision
) -> None:
    state = OverflowState(1)
    new_state, decision = step_overflow_shrunk(state, observation, CONFIG)
    assert decision == expected
    assert new_state == state  # the retry was counted by step_overflow, not again here


@pytest.mark.parametrize(
    ("window", "asked", "changes", "expected"),
    [
        # the window's output fraction
        pytest.param(2048, 32768, {}, 512, id="2k-window-fraction"),
        pytest.param(8192, 32768, {}, 2048, id="8k-window-fraction"),
        pytest.param(16_000, 32768, {}, 4000, id="16k-window-fraction-under-reply-cap"),
        pytest.param(16_000, 1024, {}, 1024, id="asked-less"),
        # a small or unknown window: one reply is bounded by reply_max_tokens
        pytest.param(None, 32768, {}, 4096, id="unknown-window-reply-cap"),
        pytest.param(32_768, 32768, {}, 4096, id="32k-local-window-reply-cap"),
        pytest.param(20_000, 32768, {}, 4096, id="20k-window-reply-cap"),
        pytest.param(None, 1000, {}, 1000, id="unknown-window-asked-less"),
        pytest.param(None, 32768, {"reply_max_tokens": 1024}, 1024, id="reply-cap-configured"),
        pytest.param(8192, 32768, {"reply_max_tokens": 1024}, 1024, id="reply-cap-under-fraction"),
        pytest.param(65_536, 32768, {"reply_cap_window": 65_536}, 4096,
                     id="reply-cap-window-raised"),
        # a large (cloud) window is unharmed: only the fraction of what was asked
        pytest.param(32_769, 32768, {}, 8192, id="just-over-reply-cap-window"),
        pytest.param(128_000, 32768, {}, 32000, id="128k-cloud-window"),
        pytest.param(200_000, 32768, {}, 32768, id="200k-cloud-window"),
        pytest.param(200_000, 16384, {}, 16384, id="cloud-lowered-cap-kept"),
    ],
)
def test_output_cap_is_a_fraction_of_the_window_and_bounded_for_small_ones(
    window: int | None, asked: int, changes: dict[str, int], expected: int
) -> None:
    assert output_cap(window, asked, MercuryConfig(**changes)) == expected


@pytest.mark.parametrize(
    ("window", "reserve", "fixed", "expected"),
    [
        pytest.param(None, 4000, 0, None, id="unknown"),
        pytest.param(16_000, 4000, 0, int((16_000 - 4000) * 4 * 0.15), id="16k"),
        pytest.param(16_000, 4000, 1500, int((16_000 - 4000) * 4 * 0.15), id="16k-room-to-spare"),
        pytest.param(8192, 512, 0, int((8192 - 512) * 4 * 0.15), id="8k"),
        pytest.param(4096, 512, 1000, 2150, id="4k-floor"),
        pytest.param(4096, 512, 2000, 1584, id="4k-quarter-of-the-room"),
        # 2,048 tokens, 512 for the reply: tools, system prompt and task leave 323 tokens free
        pytest.param(2048, 512, 1213, 323, id="2k-quarter-of-the-room"),
        pytest.param(2048, 512, 1500, 300, id="2k-smallest"),
        pytest.param(2048, 512, 4000, 300, id="2k-over-smallest"),
        pytest.param(2048, 4000, 0, 1024, id="reserve-capped"),
    ],
)
def test_tool_result_chars(window: int | None, reserve: int, fixed: int,
                           expected: int | None) -> None:
    assert tool_result_chars(window, reserve, CONFIG, fixed) == expected


@pytest.mark.parametrize(
    ("result_chars", "expected"),
    [
        pytest.param(None, 8192, id="no-window-compaction-size"),
        pytest.param(100_000, 8192, id="large-window-compaction-size"),
        pytest.param(4000, 2000, id="half-a-result"),
        pytest.param(2000, 1000, id="min-kept"),
        pytest.param(1500, 750, id="small-window-follows-results"),
        pytest.param(323, 161, id="2k-window"),
    ],
)
def test_shrink_floor(result_chars: int | None, expected: int) -> None:
    assert shrink_floor(CONFIG, result_chars) == expected


def test_shrink_to_fit_cuts_the_largest_even_when_recent_and_keeps_the_task() -> None:
    task = "do it " * 500
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": task},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "1", "type": "function",
                         "function": {"name": "read_file", "arguments": '{"path": "a"}'}}]},
        {"role": "tool", "tool_call_id": "1", "content": "A" * 100_000},
    ]
    result = shrink_to_fit(messages, 4000)
    assert estimate_tokens(result.messages) <= 4000
    assert result.messages[1]["content"] == task
    assert result.messages[2] == messages[2]
    assert compaction_marker(100_000) in result.messages[3]["content"]
    assert result.compacted == 1


def test_shrink_to_fit_stops_when_nothing_can_be_cut() -> None:
    messages = [{"role": "user", "content": "x" * 40_000}]
    result = shrink_to_fit(messages, 1000)
    assert result.compacted == 0
    assert result.messages == tuple(messages)
