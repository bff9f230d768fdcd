"""Table tests for the turn-end verdict and its precedence."""

import pytest

from mercury_nb.contract.turns.stream_ending import StreamEnding
from mercury_nb.contract.turns.turn_verdict import TurnObservation, TurnVerdict, classify_turn_end

C, T, INT = StreamEnding.COMPLETE, StreamEnding.TRUNCATED, StreamEnding.INTERRUPTED


@pytest.mark.parametrize(
    ("obs", "expected"),
    [
        pytest.param(TurnObservation(75, 75, True, C), TurnVerdict.STEPS_EXHAUSTED,
                     id="75-of-75-with-tool-calls-is-steps-exhausted"),
        pytest.param(TurnObservation(75, 75, False, C), TurnVerdict.TEXT_STOP,
                     id="75-of-75-plain-stop-is-text-stop"),
        pytest.param(TurnObservation(12, 75, True, C), TurnVerdict.TEXT_STOP,
                     id="12-of-75-with-tool-calls-is-text-stop"),
        pytest.param(TurnObservation(80, 75, True, C), TurnVerdict.STEPS_EXHAUSTED,
                     id="over-budget-with-tool-calls-is-steps-exhausted"),
        pytest.param(TurnObservation(75, 0, True, C), TurnVerdict.TEXT_STOP,
                     id="no-budget-never-exhausts"),
        pytest.param(TurnObservation(75, 75, True, C, aborted=True), TurnVerdict.ABORTED,
                     id="aborted-beats-steps-exhausted"),
        pytest.param(TurnObservation(3, 75, False, INT, aborted=True), TurnVerdict.ABORTED,
                     id="aborted-beats-interrupted"),
        pytest.param(TurnObservation(3, 75, False, T, aborted=True), TurnVerdict.ABORTED,
                     id="aborted-beats-truncated"),
        pytest.param(TurnObservation(3, 75, False, C, aborted=True), TurnVerdict.ABORTED,
                     id="aborted-beats-text-stop"),
        pytest.param(TurnObservation(75, 75, True, INT), TurnVerdict.INTERRUPTED,
                     id="interrupted-beats-steps-exhausted"),
        pytest.param(TurnObservation(75, 75, True, T), TurnVerdict.TRUNCATED,
                     id="truncated-beats-steps-exhausted"),
        pytest.param(TurnObservation(4, 75, False, INT), TurnVerdict.INTERRUPTED,
                     id="interrupted-stream"),
        pytest.param(TurnObservation(4, 75, False, T), TurnVerdict.TRUNCATED,
                     id="truncated-stream"),
        # a step that called finish ended the turn, on the last step of the budget too
        pytest.param(TurnObservation(75, 75, True, C, finished=True), TurnVerdict.TEXT_STOP,
                     id="finish-on-the-last-step-is-text-stop"),
        pytest.param(TurnObservation(75, 75, True, C, aborted=True, finished=True),
                     TurnVerdict.ABORTED, id="aborted-beats-finish"),
        pytest.param(TurnObservation(75, 75, True, INT, finished=True),
                     TurnVerdict.INTERRUPTED, id="interrupted-beats-finish"),
    ],
)
def test_turn_verdict_table(obs: TurnObservation, expected: TurnVerdict) -> None:
    assert classify_turn_end(obs) is expected


@pytest.mark.parametrize(
    ("finish_reason", "expected"),
    [
        pytest.param("other", TurnVerdict.INTERRUPTED, id="other-is-interrupted"),
        pytest.param("error", TurnVerdict.INTERRUPTED, id="error-is-interrupted"),
        pytest.param(None, TurnVerdict.INTERRUPTED, id="missing-is-interrupted"),
        pytest.param("length", TurnVerdict.TRUNCATED, id="length-is-truncated"),
        pytest.param("tool_calls", TurnVerdict.STEPS_EXHAUSTED, id="tool-calls-at-budget"),
        pytest.param("stop", TurnVerdict.STEPS_EXHAUSTED, id="stop-with-tool-calls-at-budget"),
    ],
)
def test_finish_reason_through_verdict(finish_reason: str | None, expected: TurnVerdict) -> None:
    from mercury_nb.contract.turns.stream_ending import classify_finish_reason

    obs = TurnObservation(75, 75, True, classify_finish_reason(finish_reason))
    assert classify_turn_end(obs) is expected
