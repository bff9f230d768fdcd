"""The bounds of one stream as a pure decision: its total deadline and its length cap, and
that both cuts take the interrupted path (retried, then the next provider), never truncated."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.escalation.provider_policy import FailedAttempt, classify_failure
from mercury_nb.contract.turns.stream_bounds import (
    DeadlinePassed,
    ReplyLimits,
    ReplyTooLong,
    StreamBounds,
    StreamCheck,
    StreamCut,
    Within,
    check_stream,
    cut_kind,
    cut_message,
)
from mercury_nb.contract.turns.stream_ending import StreamEnding, classify_stream

BOUNDS = StreamBounds(deadline_s=60.0, max_tokens=100, chars_per_token=16)


@pytest.mark.parametrize(
    ("elapsed", "chars", "began", "expected"),
    [
        pytest.param(0.0, 0, True, Within(), id="fresh"),
        pytest.param(59.9, 1600, True, Within(), id="just-inside-both"),
        pytest.param(60.0, 0, True, DeadlinePassed(60.0, True), id="deadline-exactly"),
        pytest.param(3600.0, 5, True, DeadlinePassed(60.0, True), id="trickled-for-an-hour"),
        pytest.param(61.0, 0, False, DeadlinePassed(60.0, False), id="deadline-before-response"),
        pytest.param(1.0, 1601, True, ReplyTooLong(1600, 100), id="one-char-over-the-cap"),
        pytest.param(1.0, 10**9, True, ReplyTooLong(1600, 100), id="endless-stream"),
        pytest.param(61.0, 10**9, True, DeadlinePassed(60.0, True), id="late-and-long-is-late"),
    ],
)
def test_check_stream(elapsed: float, chars: int, began: bool, expected: StreamCheck) -> None:
    assert check_stream(BOUNDS, elapsed, chars, began) == expected


@pytest.mark.parametrize(
    ("cut", "kind", "words"),
    [
        pytest.param(DeadlinePassed(60.0, True), "interrupted",
                     ("60s request deadline", "MERCURY_REQUEST_DEADLINE_S"), id="deadline"),
        pytest.param(DeadlinePassed(2.5, False), "timeout",
                     ("2.5s request deadline",), id="deadline-before-the-response"),
        pytest.param(ReplyTooLong(1600, 100), "interrupted",
                     ("1600 characters", "max_tokens=100", "MERCURY_REPLY_CHARS_PER_TOKEN"),
                     id="too-long"),
    ],
)  # fmt: skip
def test_a_cut_is_interrupted_and_transient(cut: StreamCut, kind: str,
                                            words: tuple[str, ...]) -> None:
    assert cut_kind(cut) == kind
    message = cut_message(cut)
    assert all(word in message for word in words), message
    # raised by the transport, the core sees a stream that failed: interrupted, never
    # truncated (whose text would be kept as context and resumed from)
    assert classify_stream("stop", RuntimeError(message)) is StreamEnding.INTERRUPTED
    assert classify_stream("length", RuntimeError(message)) is StreamEnding.INTERRUPTED
    assert classify_failure(FailedAttempt(message, kind=kind)) == "transient"


def test_the_cap_follows_the_requests_max_tokens() -> None:
    limits = ReplyLimits(deadline_s=30.0, chars_per_token=8)
    assert limits.bounds(4096).max_chars == 32768
    assert limits.bounds(0).max_chars == 8  # never a zero cap


@pytest.mark.parametrize(
    ("env", "deadline", "per_token"),
    [
        pytest.param({}, 1800.0, 16, id="defaults-three-timeouts"),
        pytest.param({"MERCURY_REQUEST_TIMEOUT_S": "20"}, 60.0, 16, id="follows-the-timeout"),
        pytest.param({"MERCURY_REQUEST_DEADLINE_S": "90", "MERCURY_REPLY_CHARS_PER_TOKEN": "4"},
                     90.0, 4, id="set"),
    ],
)  # fmt: skip
def test_limits_come_from_the_config(env: dict[str, str], deadline: float,
                                     per_token: int) -> None:
    assert ReplyLimits.of(MercuryConfig.load(env)) == ReplyLimits(deadline, per_token)


def test_a_transport_without_config_gets_the_defaults() -> None:
    assert ReplyLimits.default(600.0) == ReplyLimits.of(MercuryConfig.load({}))


@pytest.mark.parametrize("bad", [
    {"deadline_s": 0.0, "max_tokens": 1, "chars_per_token": 1},
    {"deadline_s": 1.0, "max_tokens": 0, "chars_per_token": 1},
    {"deadline_s": 1.0, "max_tokens": 1, "chars_per_token": 0},
])
def test_unusable_bounds_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        StreamBounds(**bad)  # type: ignore[arg-type]
