"""Classifies why a turn of the agent loop ended: the five turn-end verdicts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from mercury_nb.contract.turns.stream_ending import StreamEnding
from mercury_nb.contract.vocabulary import TurnVerdict

__all__ = ["TurnObservation", "TurnVerdict", "classify_turn_end"]


@dataclass(frozen=True)
class TurnObservation:
    """What the loop saw at the end of its last step."""

    steps_used: int
    max_steps: int
    last_step_had_tool_calls: bool
    stream: StreamEnding
    aborted: bool = False
    finished: bool = False
    """The last step called ``finish``: the model ended the turn itself."""


def classify_turn_end(obs: TurnObservation) -> TurnVerdict:
    """Precedence: aborted > interrupted/truncated > steps-exhausted > text-stop.

    ``steps-exhausted`` needs a positive budget, the budget used up, and tool calls in
    the last step: a model that stopped with a plain answer on its last step stopped, and
    so did one whose last step called ``finish``.
    """
    if obs.aborted:
        return TurnVerdict.ABORTED
    match obs.stream:
        case StreamEnding.INTERRUPTED:
            return TurnVerdict.INTERRUPTED
        case StreamEnding.TRUNCATED:
            return TurnVerdict.TRUNCATED
        case StreamEnding.COMPLETE:
            pass
        case _ as unreachable:
            assert_never(unreachable)
    if obs.finished:
        return TurnVerdict.TEXT_STOP
    if obs.max_steps > 0 and obs.steps_used >= obs.max_steps and obs.last_step_had_tool_calls:
        return TurnVerdict.STEPS_EXHAUSTED
    return TurnVerdict.TEXT_STOP
