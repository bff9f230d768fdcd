"""Table tests of the turn router's escalation routes: guard trigger and rounds, forced-choice
refusals, doom loops and provider trouble, as pure decisions over facts."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    Blocker,
    Paused,
    ProviderFailure,
    VerifiedCompletion,
    WorkNotStartedPause,
)
from mercury_nb.contract.escalation.doom_loop import LOOP_DIRECTIVE, DoomLoop
from mercury_nb.contract.escalation.guard_texts import (
    FORCED_CHOICE_FALLBACK_DIRECTIVE,
    FORCED_ROUND_DIRECTIVE,
    SECOND_CYCLE_NOTICE,
    guard_round_notice,
    wake_up_directive,
)
from mercury_nb.contract.escalation.provider_policy import (
    CONTINUE_FROM_PARTIAL,
    DOOM_LOOP_KIND,
    EMPTY_REPLIES_PAUSE,
    EMPTY_REPLY_KIND,
)
from mercury_nb.contract.gate.verification import CheckRecord, Verified
from mercury_nb.contract.turns.router_state import (
    FinishWith,
    GuardRound,
    Measured,
    NextTurn,
    ProviderTrouble,
    RetryStep,
    RouterDecision,
    RouterState,
    TurnDirective,
    TurnFacts,
    user,
)
from mercury_nb.contract.turns.turn_router import step_router
from mercury_nb.contract.turns.turn_verdict import TurnVerdict
from mercury_nb.contract.vocabulary import MUTATING_TOOLS
from mercury_nb.transport.protocol import ToolChoice

WORK = "Build a todo CLI in todo.py with tests"
QUESTION = "What does todo.py do?"
NARRATION = "Building the todo CLI now. I'll create the files next."
THINKING_400 = "tool_choice 'required' is not supported when thinking is enabled"
LOOP = DoomLoop("identical-calls", 'list_dir({"path":"."}) called 4 times in a row')
PASSED = Verified(CheckRecord(command="python -m pytest -q", exit_code=0, seq=3))


def start(
    task: str = WORK, chain: tuple[str, ...] = ("a", "b", "c"), **changes: Any
) -> tuple[RouterState, MercuryConfig]:
    values: dict[str, Any] = {"retry_base_s": 0.0}
    values.update(changes)
    config = MercuryConfig(model=chain[0], fallbacks=chain[1:], **values)
    return RouterState.start(task, config), config


def text_stop(
    reply: str = NARRATION, *, mutations: int = 0, changed: tuple[str, ...] = (),
    complete: bool = True, failed: Blocker | None = None, **kw: Any,
) -> TurnFacts:
    return TurnFacts(
        verdict=TurnVerdict.TEXT_STOP, reply_text=reply, mutations_in_task=mutations,
        measured=Measured(changed, "snapshot", complete), last_failed_mutation=failed, **kw,
    )


def trouble(
    message: str = "overloaded", status: int | None = 503, *, choice: ToolChoice = "auto",
    tools: tuple[str, ...] | None = None, after_output: bool = False, kind: str = "error",
    doom: DoomLoop | None = None,
) -> TurnFacts:
    problem = ProviderTrouble(
        provider="x", message=message, status=status, kind=kind, streamed_output=after_output,
        tool_choice=choice, tool_names=tools,
    )
    return TurnFacts(verdict=TurnVerdict.INTERRUPTED, trouble=problem, doom=doom)


def looped(doom: DoomLoop = LOOP) -> TurnFacts:
    return trouble(doom.description, None, kind=DOOM_LOOP_KIND, doom=doom)


def kind_of(decision: RouterDecision) -> str:
    if isinstance(decision, FinishWith):
        return type(decision.ending).__name__
    return type(decision).__name__


def guard_started(
    served_by: int = 0, **changes: Any
) -> tuple[RouterState, MercuryConfig, GuardRound]:
    state, config = start(**changes)
    state = replace(state, providers=replace(state.providers, current=served_by))
    state, decision = step_router(state, text_stop(), config)
    assert isinstance(decision, GuardRound)
    return state, config, decision


# --- the trigger -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "mode", "facts", "expected"),
    [
        pytest.param(WORK, "execute", text_stop(), "GuardRound", id="work-narration-starts"),
        pytest.param(QUESTION, "execute", text_stop(), "NoChangesCompletion",
                     id="question-never-starts"),
        pytest.param(WORK, "chat", text_stop(), "NoChangesCompletion", id="chat-never-starts"),
        # a work task the model ends by asking the user is a question, never a completion
        pytest.param(WORK, "execute", text_stop("Should todos live in JSON or SQLite?"),
                     "QuestionPause", id="reply-asks-the-user"),
        pytest.param(QUESTION, "execute", text_stop("Which part of todo.py do you mean?"),
                     "NoChangesCompletion", id="question-task-asks-back-is-an-answer"),
        # a prose "I can't" with nothing tried is narration: the guard, not a blocker
        pytest.param(WORK, "execute", text_stop("I'm sorry, I can't do that."),
                     "GuardRound", id="reply-says-it-cannot"),
        pytest.param(WORK, "execute", text_stop(mutations=1), "NoChangesCompletion",
                     id="mutation-landed-and-undone"),
        pytest.param(WORK, "execute", text_stop(changed=("todo.py",)), "NextTurn",
                     id="changes-on-disk-go-to-the-gate"),
        pytest.param(WORK, "execute", text_stop(complete=False), "Paused",
                     id="unmeasured-workspace-pauses"),
    ],
)
def test_guard_trigger(task: str, mode: str, facts: TurnFacts, expected: str) -> None:
    state, config = start(task, mode=mode)
    _, decision = step_router(state, facts, config)
    assert kind_of(decision) == expected


def test_first_round_is_grounded_forced_and_offers_every_tool() -> None:
    _, _, decision = guard_started()
    assert decision == GuardRound(
        round=decision.round,
        directive=TurnDirective((user(FORCED_ROUND_DIRECTIVE),), "required", None, 0,
                                must_mutate=True),
        grounding=True,
        notice=guard_round_notice(1, 5),
    )


@pytest.mark.parametrize(
    ("served_by", "expected"),
    [
        pytest.param(0, [0, 1, 2, 0], id="served-by-a"),
        pytest.param(1, [1, 2, 0, 1], id="served-by-b-not-a"),
        pytest.param(2, [2, 0, 1, 2], id="served-by-c-wraps"),
    ],
)
def test_rounds_rotate_from_the_serving_provider(served_by: int, expected: list[int]) -> None:
    state, config, decision = guard_started(served_by)
    seen = [decision.directive.provider_index]
    for _ in range(3):
        state, decision = step_router(state, text_stop(), config)
        assert isinstance(decision, GuardRound)
        seen.append(decision.directive.provider_index)
        assert state.providers.current == decision.directive.provider_index
    assert seen == expected


def test_ten_failed_rounds_wake_up_then_pause_naming_the_blocker() -> None:
    state, config, decision = guard_started()
    rounds = [decision]
    blocker = Blocker("write_file", "Error: permission denied: todo.py")
    while isinstance(decision, GuardRound):
        failed = blocker if decision.round.round == 3 else None
        state, decision = step_router(state, text_stop(failed=failed), config)
        if isinstance(decision, GuardRound):
            rounds.append(decision)
    assert [r.round.round for r in rounds] == list(range(1, 11))
    assert [r.grounding for r in rounds] == [True] + [False] * 4 + [True] + [False] * 4
    wake_up = rounds[5]
    assert wake_up.directive.messages == (user(wake_up_directive(5)),)
    assert [r.notice for r in rounds[5:]] == [SECOND_CYCLE_NOTICE] * 5
    assert decision == FinishWith(WorkNotStartedPause(blocker))


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        pytest.param(text_stop("Done.", mutations=2, changed=("todo.py",), evidence=PASSED),
                     "VerifiedCompletion", id="mutation-then-gate"),
        # in a round only a typed finish ends the guard: prose fails the round
        pytest.param(text_stop("JSON or SQLite?"), "GuardRound", id="asks-the-user"),
        pytest.param(text_stop("Sorry, I am unable to write files here."), "GuardRound",
                     id="says-it-is-blocked"),
        pytest.param(text_stop("Still planning."), "GuardRound", id="narrates-again"),
        pytest.param(TurnFacts(TurnVerdict.STEPS_EXHAUSTED), "GuardRound",
                     id="budget-spent-reading"),
        pytest.param(TurnFacts(TurnVerdict.STEPS_EXHAUSTED, mutations_in_task=1), "NextTurn",
                     id="budget-spent-working"),
        pytest.param(TurnFacts(TurnVerdict.TRUNCATED), "NextTurn", id="truncated-resumes"),
        pytest.param(TurnFacts(TurnVerdict.ABORTED), "Aborted", id="stopped"),
    ],
)
def test_how_a_round_ends(facts: TurnFacts, expected: str) -> None:
    state, config, _ = guard_started()
    after, decision = step_router(state, facts, config)
    assert kind_of(decision) == expected
    if expected == "GuardRound":
        assert isinstance(decision, GuardRound)
        assert decision.round.round == 2
        assert decision.fresh_budget is (facts.verdict is TurnVerdict.STEPS_EXHAUSTED)
    if facts.verdict is TurnVerdict.TRUNCATED:
        assert after.guard == state.guard, "a truncation resume is not a guard round"


def test_verified_completion_after_a_round() -> None:
    state, config, _ = guard_started()
    facts = text_stop("Done.", mutations=2, changed=("todo.py",), evidence=PASSED)
    after, decision = step_router(state, facts, config)
    assert decision == FinishWith(VerifiedCompletion(PASSED))
    assert not after.guard.active and after.guard_round is None


# --- refused forced choice ----------------------------------------------------------------


def test_refused_forced_round_retries_unforced_and_is_no_provider_failure() -> None:
    state, config, _ = guard_started(1)
    refused = trouble(THINKING_400, 400, choice="required", tools=None)
    after, retry = step_router(state, refused, config)
    assert retry == RetryStep(
        TurnDirective((user(FORCED_CHOICE_FALLBACK_DIRECTIVE),), "auto", None, 1,
                      must_mutate=True))
    assert after.providers == state.providers
    assert 1 in after.guard.forced_rejected
    # the next rounds: provider 2 is forced, provider 1's turn comes unforced
    after, round2 = step_router(after, text_stop(), config)
    after, _ = step_router(after, text_stop(), config)  # round 3, on provider 0
    after, round4 = step_router(after, text_stop(), config)
    assert isinstance(round2, GuardRound) and isinstance(round4, GuardRound)
    assert (round2.directive.provider_index, round2.directive.tool_choice) == (2, "required")
    assert (round4.directive.provider_index, round4.directive.tool_choice) == (1, "auto")
    assert round4.directive.tool_names is None  # the same tools array, un-forced
    assert round4.directive.must_mutate
    assert FORCED_CHOICE_FALLBACK_DIRECTIVE in round4.directive.messages[0]["content"]


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        pytest.param(trouble(THINKING_400, 400, choice="required", tools=("run_command",)),
                     RetryStep(TurnDirective((), "auto", ("run_command",), 0)),
                     id="forced-verification-refused"),
        pytest.param(trouble("messages: bad role", 400, choice="required"), "switch",
                     id="other-400-on-forced-step"),
        pytest.param(trouble(THINKING_400, 400), "switch", id="refusal-text-on-auto-step"),
        pytest.param(trouble(THINKING_400, 400, choice="required", after_output=True), "switch",
                     id="refusal-after-output"),
    ],
)
def test_forced_choice_refusal_outside_the_guard(facts: TurnFacts, expected: object) -> None:
    state, config = start()
    after, decision = step_router(state, facts, config)
    if expected == "switch":
        assert isinstance(decision, RetryStep) and decision.directive.provider_index == 1
        assert list(after.providers.ledger) == ["a"]
    else:
        assert decision == expected
        assert after.providers == state.providers


# --- provider trouble and doom loops -------------------------------------------------------


@pytest.mark.parametrize(
    ("retries", "expected_index"),
    [pytest.param(3, 0, id="retried-on-same"), pytest.param(0, 1, id="switched")],
)
def test_failed_forced_step_is_resent_forced(retries: int, expected_index: int) -> None:
    state, config = start(retry_attempts=retries)
    _, decision = step_router(
        state, trouble(choice="required", tools=MUTATING_TOOLS), config)
    assert isinstance(decision, RetryStep)
    assert decision.directive == TurnDirective((), "required", MUTATING_TOOLS, expected_index)


def test_failure_after_output_continues_from_the_partial_turn() -> None:
    state, config = start(retry_attempts=0)
    _, decision = step_router(state, trouble(after_output=True), config)
    assert isinstance(decision, RetryStep)
    assert decision.directive == TurnDirective((user(CONTINUE_FROM_PARTIAL),), "auto", None, 1)


def test_doom_loop_switches_at_once_and_says_what_looped() -> None:
    state, config = start(retry_attempts=3)
    after, decision = step_router(state, looped(), config)
    assert decision == RetryStep(
        TurnDirective((user(LOOP_DIRECTIVE.format(description=LOOP.description)),),
                      provider_index=1),
        notice=f"⚠ a: doom-loop: {LOOP.description} — switching to b and continuing.",
    )
    assert dict(after.providers.ledger) == {"a": f"doom-loop: {LOOP.description}"}


def test_doom_loop_on_the_whole_chain_pauses_naming_the_loop() -> None:
    state, config = start()
    for _ in range(2):
        state, decision = step_router(state, looped(), config)
        assert isinstance(decision, RetryStep)
    last = DoomLoop("tool-failures", "read_file failed 6 times in a row")
    _, decision = step_router(state, looped(last), config)
    assert decision == FinishWith(Paused(
        "I got stuck in a loop on every model I could try "
        "(last: read_file failed 6 times in a row)"))


def test_truncation_does_not_make_a_looping_provider_eligible_again() -> None:
    state, config = start("Write notes.md", ("a", "b"), max_truncation_rounds=20)
    state, _ = step_router(state, looped(), config)
    state, resume = step_router(state, TurnFacts(TurnVerdict.TRUNCATED), config)
    assert isinstance(resume, NextTurn) and resume.directive.provider_index == 1
    _, decision = step_router(state, looped(), config)
    assert kind_of(decision) == "Paused"


def test_every_provider_failing_carries_the_ledger() -> None:
    state, config = start(retry_attempts=0)
    for _ in range(2):
        state, decision = step_router(state, trouble(), config)
    _, decision = step_router(state, trouble("c is down", 500), config)
    assert isinstance(decision, FinishWith) and isinstance(decision.ending, ProviderFailure)
    assert decision.ending.last_error == "HTTP 500: c is down"
    assert [(p.name, p.reason) for p in decision.ending.providers] == [
        ("a", "HTTP 503: overloaded"), ("b", "HTTP 503: overloaded"), ("c", "HTTP 500: c is down")]


@pytest.mark.parametrize(
    ("kind", "ending_type"),
    [
        pytest.param(EMPTY_REPLY_KIND, Paused, id="empty-replies-pause-naming-it"),
        pytest.param("interrupted", ProviderFailure, id="other-failures-fail"),
    ],
)
def test_a_chain_used_up_on_empty_replies_pauses(kind: str, ending_type: type) -> None:
    state, config = start(QUESTION, chain=("x",), retry_attempts=0)
    _, decision = step_router(state, trouble("nothing", None, kind=kind), config)
    assert isinstance(decision, FinishWith)
    assert isinstance(decision.ending, ending_type)
    if ending_type is Paused:
        assert decision.ending == Paused(EMPTY_REPLIES_PAUSE.format(provider="x"))


DENIED = Blocker("write_file", "denied: the user denied it")


@pytest.mark.parametrize(
    ("facts", "in_round", "expected"),
    [
        pytest.param(text_stop("You said no.", failed=DENIED, user_denied=True), False,
                     FinishWith(WorkNotStartedPause(DENIED)), id="no-round-after-a-deny"),
        pytest.param(text_stop("Still planning.", failed=DENIED, user_denied=True), True,
                     FinishWith(WorkNotStartedPause(DENIED)), id="a-round-ends-at-a-deny"),
        pytest.param(TurnFacts(TurnVerdict.STEPS_EXHAUSTED, user_denied=True), True,
                     FinishWith(WorkNotStartedPause(None)), id="steps-spent-in-a-round"),
        pytest.param(text_stop("You said no."), False, "GuardRound", id="no-deny-a-round"),
    ],
)
def test_the_guard_never_forces_past_the_users_deny(facts: TurnFacts, in_round: bool,
                                                    expected: Any) -> None:
    """The user's own Deny, and nothing changed: the task pauses (the ending then names the
    denial), where the guard would have forced a round."""
    if in_round:
        state, config, _ = guard_started()
    else:
        state, config = start()
    state, decision = step_router(state, facts, config)
    if expected == "GuardRound":
        assert isinstance(decision, GuardRound)
    else:
        assert decision == expected
        assert not state.guard.active
