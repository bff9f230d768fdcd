"""The turn router on a final reply that says blocked or asks the user: an honest pause in a
work task, never the gate nor a guard round; an answer anywhere else."""

from __future__ import annotations

from typing import Any

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    BlockedPause,
    Ending,
    NoChangesCompletion,
    QuestionPause,
    VerifiedCompletion,
)
from mercury_nb.contract.escalation.narration_guard import GuardState
from mercury_nb.contract.gate.verification import CheckRecord, EvidenceVerdict, NoCheck, Verified
from mercury_nb.contract.turns.final_reply import FinishCall
from mercury_nb.contract.turns.router_state import (
    FinishWith,
    GuardRound,
    Measured,
    NextTurn,
    RouterState,
    TurnFacts,
)
from mercury_nb.contract.turns.turn_router import step_router
from mercury_nb.contract.turns.turn_verdict import TurnVerdict

WORK = "Run the test suite and fix what fails"
QUESTION = "What does parse() do?"
PASSED = Verified(CheckRecord(command="python -m pytest -q", exit_code=0, seq=3))
BLOCKED = FinishCall("blocked", "Nothing changed.", "pip cannot reach PyPI")
ASKS = FinishCall("question", "", "Which of the two parse() functions do you mean?")


def start(task: str = WORK, **changes: Any) -> tuple[RouterState, MercuryConfig]:
    config = MercuryConfig(retry_base_s=0.0, **changes)
    return RouterState.start(task, config), config


def stop(
    reply: str = "", finish: FinishCall | None = None, *, changed: tuple[str, ...] = (),
    evidence: EvidenceVerdict | None = None,
) -> TurnFacts:
    return TurnFacts(
        verdict=TurnVerdict.TEXT_STOP, reply_text=reply, finish=finish,
        mutations_in_task=len(changed), measured=Measured(changed, "snapshot"),
        evidence=evidence or NoCheck(),
    )


def ending(task: str, facts: TurnFacts, **config: Any) -> Ending | str:
    state, cfg = start(task, **config)
    _, decision = step_router(state, facts, cfg)
    return decision.ending if isinstance(decision, FinishWith) else type(decision).__name__


@pytest.mark.parametrize(
    ("task", "facts", "mode", "expected"),
    [
        # a work task: blocked and question end honestly, before the guard and the gate
        pytest.param(WORK, stop(finish=BLOCKED), "execute",
                     BlockedPause("pip cannot reach PyPI"), id="finish-blocked"),
        pytest.param(WORK, stop(finish=ASKS), "execute",
                     QuestionPause("Which of the two parse() functions do you mean?"),
                     id="finish-question"),
        pytest.param(WORK, stop(finish=BLOCKED, changed=("a.py",), evidence=PASSED), "execute",
                     BlockedPause("pip cannot reach PyPI"), id="blocked-even-with-evidence"),
        # a prose (untyped) blocker gives way to a passing check that answers the task
        pytest.param(WORK, stop("I'm sorry, I can't do that.", changed=("notes.txt",),
                                evidence=PASSED), "execute",
                     VerifiedCompletion(PASSED), id="prose-sorry-gives-way-to-a-passing-check"),
        pytest.param(WORK, stop("I'm sorry, I can't do that.", changed=("notes.txt",)),
                     "execute", BlockedPause("I'm sorry, I can't do that."),
                     id="prose-sorry-after-changes-without-evidence"),
        pytest.param(WORK, stop("Should the results go in a CSV or a notebook?"), "execute",
                     QuestionPause("Should the results go in a CSV or a notebook?"),
                     id="prose-question"),
        # done goes on to the gate, which still asks for evidence
        pytest.param(WORK, stop(finish=FinishCall("done", "Fixed."), changed=("a.py",),
                                evidence=PASSED), "execute",
                     VerifiedCompletion(PASSED), id="finish-done-with-evidence"),
        pytest.param(WORK, stop(finish=FinishCall("done", "Fixed."), changed=("a.py",)),
                     "execute", "NextTurn", id="finish-done-without-evidence-is-not-done"),
        pytest.param(WORK, stop(finish=FinishCall("done", "Fixed.")), "execute", "GuardRound",
                     id="finish-done-without-any-change-meets-the-guard"),
        # an answer to a question, in chat or in execute mode, stays an answer
        pytest.param(QUESTION, stop(finish=ASKS), "execute", NoChangesCompletion("snapshot"),
                     id="question-task-asks-back"),
        pytest.param(QUESTION, stop("I can't run code, but parse() splits on commas."),
                     "execute", NoChangesCompletion("snapshot"), id="question-task-i-cant"),
        pytest.param(WORK, stop(finish=ASKS), "chat", NoChangesCompletion("snapshot"),
                     id="chat-clarifying-question"),
        pytest.param(WORK, stop("I'm sorry, I can't do that."), "chat",
                     NoChangesCompletion("snapshot"), id="chat-apology"),
        # ... unless the task changed something: then it was work after all
        pytest.param(QUESTION, stop("Sorry, I could not finish the rewrite.",
                                    changed=("parse.py",)), "execute",
                     BlockedPause("Sorry, I could not finish the rewrite."),
                     id="question-task-that-changed-files"),
    ],
)
def test_final_reply_routes(task: str, facts: TurnFacts, mode: str,
                            expected: Ending | str) -> None:
    assert ending(task, facts, mode=mode) == expected


def test_a_blocked_reply_during_a_guard_round_ends_the_guard_honestly() -> None:
    state, config = start()
    state, decision = step_router(state, stop("Running the tests now."), config)
    assert isinstance(decision, GuardRound)
    after, decision = step_router(state, stop(finish=BLOCKED), config)
    assert decision == FinishWith(BlockedPause("pip cannot reach PyPI"))
    assert after.guard == GuardState() and after.guard_round is None


def test_a_question_during_a_guard_round_is_a_question_not_a_completion() -> None:
    state, config = start()
    state, _ = step_router(state, stop("Running the tests now."), config)
    asked = "Which test runner does this project use?"
    # in prose the round failed (only a typed finish ends the guard) ...
    _, decision = step_router(state, stop(asked), config)
    assert isinstance(decision, GuardRound) and decision.round.round == 2
    # ... a typed question ends it as that question
    _, decision = step_router(state, stop(finish=FinishCall("question", "", asked)), config)
    assert decision == FinishWith(QuestionPause(asked))


def test_done_without_evidence_is_forced_to_verify() -> None:
    state, config = start()
    facts = stop(finish=FinishCall("done", "Fixed."), changed=("a.py",))
    _, decision = step_router(state, facts, config)
    assert isinstance(decision, NextTurn) and decision.directive.tool_choice == "required"
