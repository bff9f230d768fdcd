"""The escalation router's tool-support route: no guard round for a model without tools."""

from __future__ import annotations

from typing import Any

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    Ending,
    NoChangesCompletion,
    NoToolSupport,
    VerificationFailedPause,
    VerifiedCompletion,
    WorkNotStartedPause,
)
from mercury_nb.contract.escalation.guard_texts import guard_round_notice
from mercury_nb.contract.gate.run_evidence import RunAnswer
from mercury_nb.contract.gate.verification import (
    CheckFailed,
    CheckRecord,
    EvidenceVerdict,
    NoCheck,
    Verified,
)
from mercury_nb.contract.turns.escalation_router import guard_eligible, ran_for_run_task
from mercury_nb.contract.turns.router_state import (
    FinishWith,
    GuardRound,
    Measured,
    ProviderTrouble,
    RetryStep,
    RouterDecision,
    RouterState,
    TurnFacts,
)
from mercury_nb.contract.turns.stream_bounds import ReplyTooLong, cut_message
from mercury_nb.contract.turns.turn_router import step_router
from mercury_nb.contract.vocabulary import TurnVerdict

WORK = "Create hello.py that prints hello world, and run it."
QUESTION = "What is 2+2?"
PROSE = "```python\nprint('hello world')\n```\nThis will print hello world."
THINKING_400 = "tool_choice 'required' is not supported when thinking is enabled"


def start(task: str = WORK, chain: tuple[str, ...] = ("openai/smollm2",),
          **changes: Any) -> tuple[RouterState, MercuryConfig]:
    config = MercuryConfig(model=chain[0], fallbacks=chain[1:], retry_base_s=0.0, **changes)
    return RouterState.start(task, config), config


def prose(reported: bool | None = None, *, forced: bool = False, called: bool = False,
          reply: str = PROSE) -> TurnFacts:
    return TurnFacts(verdict=TurnVerdict.TEXT_STOP, reply_text=reply,
                     measured=Measured((), "snapshot"), tools_reported=reported, forced=forced,
                     called_tools=called)


def feed(state: RouterState, config: MercuryConfig,
         turns: list[TurnFacts]) -> tuple[RouterState, list[RouterDecision]]:
    decisions = []
    for facts in turns:
        state, decision = step_router(state, facts, config)
        decisions.append(decision)
        if isinstance(decision, FinishWith):
            break
    return state, decisions


def test_reported_no_tools_ends_where_the_guard_would_start() -> None:
    state, config = start()
    after, [decision] = feed(state, config, [prose(False)])
    assert decision == FinishWith(NoToolSupport("openai/smollm2", "reported"))
    assert not after.guard.active and after.guard_round is None


def test_forced_prose_twice_ends_within_two_rounds() -> None:
    state, config = start()
    _, decisions = feed(state, config, [prose(), prose(forced=True), prose(forced=True),
                                        prose(forced=True)])
    assert [type(d).__name__ for d in decisions] == ["GuardRound", "GuardRound", "FinishWith"]
    assert decisions[-1] == FinishWith(NoToolSupport("openai/smollm2", "observed", 2))
    # the notices count to the real bound of this path: two forcings answered in prose
    assert [d.notice for d in decisions if isinstance(d, GuardRound)] == [
        guard_round_notice(1, 2), guard_round_notice(2, 2)]


def test_the_guard_counts_to_its_cycle_once_a_model_has_made_a_tool_call() -> None:
    state, config = start()
    _, decisions = feed(state, config, [prose(called=True), prose(forced=True)])
    assert [d.notice for d in decisions if isinstance(d, GuardRound)] == [
        guard_round_notice(1, 5), guard_round_notice(2, 5)]


def test_a_refused_forcing_degraded_to_auto_does_not_count() -> None:
    state, config = start()
    state, first = step_router(state, prose(), config)
    assert isinstance(first, GuardRound)
    refused = ProviderTrouble(provider="openai/smollm2", message=THINKING_400, status=400,
                              tool_choice="required")
    state, retry = step_router(state, TurnFacts(verdict=TurnVerdict.INTERRUPTED,
                                                trouble=refused), config)
    assert isinstance(retry, RetryStep) and retry.directive.tool_choice == "auto"
    # every later round goes un-forced: prose there is no ignored forcing
    _, decisions = feed(state, config, [prose(forced=False)] * 10)
    assert all(isinstance(d, GuardRound) for d in decisions[:-1])
    assert decisions[-1] == FinishWith(WorkNotStartedPause(None))


@pytest.mark.parametrize(
    ("task", "mode", "facts", "ending"),
    [
        pytest.param(QUESTION, "execute", prose(False), NoChangesCompletion("snapshot"),
                     id="question"),
        pytest.param(WORK, "chat", prose(False), NoChangesCompletion("snapshot"),
                     id="chat-mode"),
        # a question in a work task no model of the chain can do cannot lead to a change
        pytest.param(WORK, "execute", prose(False, reply="Should it print Hello or hello?"),
                     NoToolSupport("openai/smollm2", "reported"),
                     id="reply-asks-the-user"),
    ],
)
def test_no_tools_never_ends_an_answer(
    task: str, mode: str, facts: TurnFacts, ending: Ending
) -> None:
    state, config = start(task, mode=mode)
    _, decision = step_router(state, facts, config)
    assert decision == FinishWith(ending)


def test_a_tool_call_beats_the_report() -> None:
    state, config = start()
    # a forced round answered by a read_file (no mutation): the server does take tools
    _, decisions = feed(state, config, [prose(False, called=True), prose(False, forced=True),
                                        prose(False, forced=True, called=True)])
    assert all(isinstance(d, GuardRound) for d in decisions)


def test_chain_with_a_provider_that_takes_tools_keeps_the_guard() -> None:
    state, config = start(chain=("openai/a", "openai/b"))
    state, first = step_router(state, prose(False), config)  # a reports no tools
    assert isinstance(first, GuardRound)
    # b has not been seen, so it may take tools: round 1 skips a, goes to b
    assert first.directive.provider_index == 1
    # b's round failed: round 2 would go back to a, which lacks tools: b again
    _, decisions = feed(state, config, [prose(None, forced=False)])
    assert isinstance(decisions[-1], GuardRound)
    assert decisions[-1].directive.provider_index == 1


def test_steps_exhausted_after_a_forced_round_is_no_ignored_forcing() -> None:
    state, config = start()
    state, _ = step_router(state, prose(), config)
    exhausted = TurnFacts(verdict=TurnVerdict.STEPS_EXHAUSTED, forced=True, called_tools=True,
                          measured=Measured((), "snapshot"))
    state, decision = step_router(state, exhausted, config)
    assert isinstance(decision, GuardRound)
    assert 0 in state.tools.called


# A task that asks to run something: a command run is the work attempted; the gate judges it.
LS_TASK = "Run the shell command: ls -la"


def ran(run: RunAnswer | None, *, mutations: int = 0, reply: str = "Here is the listing.",
        evidence: EvidenceVerdict | None = None) -> TurnFacts:
    return TurnFacts(verdict=TurnVerdict.TEXT_STOP, reply_text=reply, measured=Measured(
        (), "snapshot"), mutations_in_task=mutations, run=run, evidence=evidence or NoCheck(),
        called_tools=True)


LS_PASSED = RunAnswer("`ls -la`", Verified(CheckRecord("ls -la", 0, 1)), 1)
LS_NOT_RUN = RunAnswer("`ls -la`", NoCheck(), 1)
NOTHING_RUN = RunAnswer("`ls -la`", NoCheck(), 0)


@pytest.mark.parametrize(
    ("task", "facts", "mode", "eligible", "ran_command"),
    [
        pytest.param(LS_TASK, ran(LS_PASSED), "execute", False, True, id="requested-run"),
        pytest.param(LS_TASK, ran(LS_NOT_RUN), "execute", False, True, id="another-command"),
        pytest.param(LS_TASK, ran(NOTHING_RUN), "execute", True, False, id="no-command-ran"),
        pytest.param(LS_TASK, ran(None), "execute", True, False, id="no-run-asked"),
        pytest.param(LS_TASK, ran(LS_PASSED), "chat", False, False, id="chat-mode"),
        pytest.param("What does ls -la print?", ran(LS_PASSED), "execute", False, False,
                     id="a-question"),
    ],
)
def test_guard_eligible_gives_way_to_a_command_run(
    task: str, facts: TurnFacts, mode: str, eligible: bool, ran_command: bool
) -> None:
    state, config = start(task, mode=mode)
    assert guard_eligible(state, facts, config) is eligible
    assert ran_for_run_task(state, facts, config) is ran_command


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        pytest.param(ran(LS_PASSED), VerifiedCompletion(Verified(CheckRecord("ls -la", 0, 1))),
                     id="requested-run-verifies"),
        pytest.param(ran(LS_NOT_RUN), "NextTurn", id="gate-forces-its-one-round"),
        pytest.param(ran(NOTHING_RUN), "GuardRound", id="pure-narration-meets-the-guard"),
    ],
)
def test_a_run_task_goes_to_the_gate_once_a_command_ran(
    facts: TurnFacts, expected: Ending | str
) -> None:
    state, config = start(LS_TASK)
    _, decision = step_router(state, facts, config)
    assert (decision.ending if isinstance(decision, FinishWith)
            else type(decision).__name__) == expected


def test_an_active_guard_is_satisfied_by_the_requested_run() -> None:
    state, config = start(LS_TASK)
    state, first = step_router(state, ran(NOTHING_RUN, reply=PROSE), config)
    assert isinstance(first, GuardRound)
    state, second = step_router(state, ran(LS_PASSED, reply=""), config)
    assert isinstance(second, FinishWith)
    assert second.ending == VerifiedCompletion(Verified(CheckRecord("ls -la", 0, 1)))
    assert not state.guard.active


def test_a_failed_requested_run_pauses_naming_it_after_one_gate_round() -> None:
    state, config = start("Run the shell command: false")
    failed = CheckRecord("false", 1, 1)
    facts = ran(RunAnswer("`false`", CheckFailed(failed), 1), reply="Done.",
                evidence=CheckFailed(failed))
    state, first = step_router(state, facts, config)
    assert type(first).__name__ == "NextTurn"
    _, second = step_router(state, facts, config)
    assert isinstance(second, FinishWith)
    assert second.ending == VerificationFailedPause(failed, False, "`false`")


TOO_LONG = cut_message(ReplyTooLong(8192, 2048))


@pytest.mark.parametrize(
    ("trouble", "halved"),
    [
        pytest.param(ProviderTrouble("openai/smollm2", "max_tokens is too large: 32768",
                                     status=400), True, id="a-400-rejecting-max-tokens-halves"),
        pytest.param(ProviderTrouble("openai/smollm2", TOO_LONG, kind="interrupted"), False,
                     id="a-reply-cut-at-the-length-cap-is-retried"),
        pytest.param(ProviderTrouble("openai/smollm2", TOO_LONG, kind="timeout"), False,
                     id="a-timeout-naming-max-tokens-is-retried"),
    ],
)  # fmt: skip
def test_only_a_rejection_lowers_max_tokens_a_cut_stream_is_retried(
    trouble: ProviderTrouble, halved: bool
) -> None:
    state, config = start(retry_attempts=2)
    after, decision = step_router(state, TurnFacts(verdict=TurnVerdict.INTERRUPTED,
                                                   trouble=trouble), config)
    assert isinstance(decision, RetryStep)
    assert (decision.output_cap is not None) is halved
    # a halving is no retry of the same request; a cut stream uses one of the retries
    assert after.providers.retries == (0 if halved else 1)
