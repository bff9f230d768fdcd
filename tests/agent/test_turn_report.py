"""The loop's turn reports: which verdict each situation records, and how a returned step
is reported."""

from __future__ import annotations

import pytest

from mercury_nb.agent.turn_report import (
    CannotFit,
    Ended,
    Interrupted,
    Looped,
    Pressured,
    ProviderFailed,
    Stalled,
    TurnReport,
    ended,
    looped,
    provider_failed,
    verdict_of,
)
from mercury_nb.contract.endings import WindowTooSmall
from mercury_nb.contract.escalation.doom_loop import DoomLoop
from mercury_nb.contract.turns.router_state import ProviderTrouble
from mercury_nb.contract.turns.stream_assembly import StepReply
from mercury_nb.contract.turns.stream_ending import StreamEnding
from mercury_nb.contract.turns.turn_verdict import TurnVerdict
from mercury_nb.transport.protocol import ProviderError

REPLY = StepReply(text="partial", tool_calls=(), finish_reason=None, error=None,
                  ending=StreamEnding.COMPLETE)
TROUBLE = ProviderTrouble(provider="m", message="503", kind="http")
WINDOW = WindowTooSmall(window=4096, budget=3000, reply_tokens=1096, system_tokens=900,
                        tools_tokens=2500, compact=False)


@pytest.mark.parametrize(("report", "verdict"), [
    (Ended(TurnVerdict.TEXT_STOP, REPLY, 1024), TurnVerdict.TEXT_STOP),
    (Ended(TurnVerdict.STEPS_EXHAUSTED, REPLY, 1024), TurnVerdict.STEPS_EXHAUSTED),
    (Ended(TurnVerdict.TRUNCATED, REPLY, 1024), TurnVerdict.TRUNCATED),
    (Interrupted(REPLY, TROUBLE, 1024), TurnVerdict.INTERRUPTED),
    (ProviderFailed(TROUBLE), TurnVerdict.INTERRUPTED),
    (Stalled(REPLY, TROUBLE), TurnVerdict.INTERRUPTED),
    (Looped(DoomLoop("cycle", "a cycle"), REPLY, TROUBLE), TurnVerdict.INTERRUPTED),
    (Pressured("the kernel is using 5000 MB"), None),  # paused before a request: no turn
    (CannotFit(WINDOW), None),
])
def test_only_a_turn_that_ran_records_a_verdict(
    report: TurnReport, verdict: TurnVerdict | None
) -> None:
    assert verdict_of(report) is verdict


@pytest.mark.parametrize(("error", "after_output", "message"), [
    (None, False, "the stream ended without a finish reason"),
    ("connection reset", True, "connection reset"),
])
def test_an_interrupted_step_names_the_provider_and_whether_work_was_done(
    error: str | None, after_output: bool, message: str
) -> None:
    cut = StepReply(text="half", tool_calls=(), finish_reason=None, error=error,
                    ending=StreamEnding.INTERRUPTED)
    report = ended(TurnVerdict.INTERRUPTED, cut, "m", 512, after_output)

    assert report == Interrupted(cut, ProviderTrouble(
        provider="m", message=message, kind="interrupted", streamed_output=after_output), 512)


def test_a_step_that_came_back_ends_the_turn_with_its_cap() -> None:
    assert ended(TurnVerdict.TEXT_STOP, REPLY, "m", 512) == Ended(
        TurnVerdict.TEXT_STOP, REPLY, 512, None)


def test_a_provider_error_is_masked_before_it_is_reported(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef0123")
    error = ProviderError(provider="m", message="bad key sk-test-0123456789abcdef0123",
                          status=401, kind="auth")
    report = provider_failed(error, ("sk-test-0123456789abcdef0123",))

    assert "sk-test-0123456789abcdef0123" not in report.trouble.message
    assert (report.trouble.status, report.trouble.tool_choice) == (401, "auto")


def test_an_error_the_transport_masked_is_not_masked_again() -> None:
    # masked=True: the transport masked it with every secret; a second pass would change it
    error = ProviderError(provider="m", message="api_key=*** then sk-0123456789ab",
                          status=401, masked=True)
    assert provider_failed(error, ("sk-0123456789ab",)).trouble.message == error.message


def test_a_loop_is_named_by_its_description() -> None:
    loop = DoomLoop("identical-calls", "the same call three times")
    report = looped(loop, REPLY, "m", ())

    assert report.trouble.message == "the same call three times"
    assert report.loop is loop and report.reply is REPLY
