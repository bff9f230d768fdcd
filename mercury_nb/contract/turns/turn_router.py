"""Routes each turn-end verdict to its recovery path: the loop's one pure decision point.

The escalation routes (narration guard, doom loops, provider trouble) live in
``escalation_router``; the vocabulary (facts, state, decisions) in ``router_state``, and is
re-exported here.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    Aborted,
    BlockedPause,
    BudgetPause,
    Ending,
    FilesMissingPause,
    NoChangesCompletion,
    Paused,
    QuestionPause,
    StepBudgetPause,
    TruncationPause,
    VerificationFailedPause,
    VerifiedCompletion,
)
from mercury_nb.contract.escalation import provider_policy as pp
from mercury_nb.contract.escalation.narration_guard import GuardState
from mercury_nb.contract.gate.completion_gate import (
    Complete,
    CompleteNoChanges,
    ForceVerification,
    GateObservation,
    PauseFilesMissing,
    PauseVerificationFailed,
    step_gate,
)
from mercury_nb.contract.gate.run_evidence import RunAnswer, task_evidence
from mercury_nb.contract.gate.task_intent import TaskIntent
from mercury_nb.contract.gate.verification import Verified
from mercury_nb.contract.recovery.continuation import (
    AutoContinue,
    PauseStepBudget,
    PauseTruncated,
    ResumeTruncated,
    TruncationObservation,
    on_steps_exhausted,
    on_truncated,
)
from mercury_nb.contract.turns.escalation_router import guard_first, route_guard, route_trouble
from mercury_nb.contract.turns.final_reply import Blocked, Done, Question, classify_final_reply
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
from mercury_nb.contract.turns.tool_route import forcing_ignored, observe_turn_tools, window_ending
from mercury_nb.contract.turns.turn_verdict import TurnVerdict

__all__ = [
    "FinishWith",
    "GuardRound",
    "Measured",
    "NextTurn",
    "ProviderTrouble",
    "RetryStep",
    "RouterDecision",
    "RouterState",
    "TurnDirective",
    "TurnFacts",
    "step_router",
]



def step_router(
    state: RouterState, facts: TurnFacts, config: MercuryConfig
) -> tuple[RouterState, RouterDecision]:
    """One decision per turn end; exhaustive over the five verdicts.

    A pressure pause from the memory governor ends the task first, whatever the verdict.
    What the turn showed of tool support is learned before anything is read. A
    ``text-stop`` or ``steps-exhausted`` turn goes to the narration guard first (a
    ``text-stop`` after its reading as a blocker or question, unless ``guard_first``), and
    so does a forced round's prose cut by the output limit; only when the guard has nothing
    to do does the gate, the step budget or the truncation path decide."""
    if facts.window_too_small is not None:  # no request can be sent: never resumable
        return state, FinishWith(window_ending(state, facts.window_too_small, facts))
    if facts.pressure_pause is not None:
        return state, FinishWith(Paused(facts.pressure_pause))  # the banner adds the resume hint
    if facts.budget_hit is not None:  # spent: paused before the next request, none sent
        return state, FinishWith(BudgetPause(facts.budget_hit))
    if facts.permission_pause is not None:  # denied: nobody could allow what it needs
        return state, FinishWith(Paused(facts.permission_pause))
    match facts.verdict:
        case TurnVerdict.ABORTED:
            return state, FinishWith(Aborted())
        case TurnVerdict.INTERRUPTED:
            return route_trouble(state, facts, config)
        case TurnVerdict.TRUNCATED:
            # the turn goes on: retries reset, but providers that failed in it stay skipped
            state = replace(state, providers=replace(state.providers, retries=0))
            state = observe_turn_tools(state, facts)
            if state.guard.active and forcing_ignored(facts):  # the round failed: force again
                state, guarded = route_guard(state, facts, config)
                if guarded is not None:
                    return state, guarded
            return _on_truncated(state, facts, config)
        case TurnVerdict.STEPS_EXHAUSTED:
            state = replace(state, providers=pp.record_success(state.providers))
            state = observe_turn_tools(state, facts)
            state, guarded = route_guard(state, facts, config)
            if guarded is not None:
                return state, guarded
            return _on_steps_exhausted(state, config)
        case TurnVerdict.TEXT_STOP:
            state = replace(state, providers=pp.record_success(state.providers))
            state = observe_turn_tools(state, facts)
            first = guard_first(state, facts, config)
            if first:  # a round answered in prose, or a provider without tools
                state, guarded = route_guard(state, facts, config)
                if guarded is not None:
                    return state, guarded
            stopped = _final_reply_ending(state, facts, config)
            if stopped is not None:  # a blocker or a question: no guard round, no gate
                return replace(state, guard=GuardState(), guard_round=None), FinishWith(stopped)
            if not first:
                state, guarded = route_guard(state, facts, config)
                if guarded is not None:
                    return state, guarded
            return _on_text_stop(state, facts, config)
        case _ as unreachable:
            assert_never(unreachable)


def _final_reply_ending(
    state: RouterState, facts: TurnFacts, config: MercuryConfig
) -> Ending | None:
    """The honest pause of a work task whose final reply says it is blocked or asks the
    user (read by ``classify_final_reply``); None when it claims done, which the gate decides.

    Only in execute mode, and only for a task that asked for work or changed something: a
    clarifying question or an "I can't" in answer to a question is the answer itself. A
    reading of prose (no ``finish`` call) gives way to what was measured when the two
    disagree: files the task named are missing, or a prose question stands where the task
    asks for code, tests or a run that no passing check shows. The gate then forces its
    round and pauses naming what is undone; a stated blocker otherwise stays the blocker."""
    measured = facts.measured
    work_done = facts.mutations_in_task > 0 or bool(measured and measured.changed_paths)
    if config.mode != "execute" or not (state.intent is TaskIntent.WORK or work_done):
        return None
    reading = classify_final_reply(facts.finish, facts.reply_text, work_done=work_done)
    if isinstance(reading, Done):
        return None
    if facts.finish is None and work_done and _measured_unmet(state, facts, config, reading):
        return None
    match reading:
        case Blocked(reason=reason):
            return BlockedPause(reason)
        case Question(text=text):
            return QuestionPause(text)
        case _ as unreachable:
            assert_never(unreachable)


def _measured_unmet(
    state: RouterState, facts: TurnFacts, config: MercuryConfig, reading: Blocked | Question
) -> bool:
    """The workspace disagrees with the prose: a file the task named is missing; against a
    question, a check it needs has not passed after the last change; against a blocker,
    the evidence that answers the task is a passing check (the gate then completes)."""
    if facts.measured is not None and facts.measured.missing_files:
        return True
    verified = isinstance(task_evidence(facts.evidence, _work_run(state, facts)), Verified)
    if not isinstance(reading, Question):
        return verified
    return state.requirements.needs_check and not verified


def _work_run(state: RouterState, facts: TurnFacts) -> RunAnswer | None:
    """The run a work task asks for; a question's runs are only talked about."""
    return facts.run if state.intent is TaskIntent.WORK else None


def _continue(state: RouterState, text: str) -> TurnDirective:
    return TurnDirective(messages=(user(text),), provider_index=state.providers.current)


def _on_truncated(
    state: RouterState, facts: TurnFacts, config: MercuryConfig
) -> tuple[RouterState, RouterDecision]:
    obs = TruncationObservation(cut_write=facts.cut_write, path=facts.cut_write_path,
                                answering=state.intent is TaskIntent.QUESTION,
                                reply_cap=facts.reply_cap)
    truncation, decision = on_truncated(state.truncation, obs, config)
    state = replace(state, truncation=truncation)
    match decision:
        case ResumeTruncated(prompt=prompt):
            return state, NextTurn(_continue(state, prompt), fresh_budget=True)
        case PauseTruncated(rounds=rounds):
            return state, FinishWith(TruncationPause(rounds))
        case _ as unreachable:
            assert_never(unreachable)


def _on_steps_exhausted(
    state: RouterState, config: MercuryConfig
) -> tuple[RouterState, RouterDecision]:
    budget, decision = on_steps_exhausted(state.budget, state.task, config)
    state = replace(state, budget=budget)
    match decision:
        case AutoContinue(nudge=nudge, notice=notice):
            return state, NextTurn(_continue(state, nudge), notice, fresh_budget=True)
        case PauseStepBudget(continuations=n):
            return state, FinishWith(StepBudgetPause(n))
        case _ as unreachable:
            assert_never(unreachable)


def _on_text_stop(
    state: RouterState, facts: TurnFacts, config: MercuryConfig
) -> tuple[RouterState, RouterDecision]:
    measured = facts.measured
    if measured is not None and measured.unreadable:
        first = measured.unreadable[0]
        shown = json.dumps(first.path, ensure_ascii=False)  # quoted, controls escaped
        reason = f"I couldn't read back {shown} ({first.why}), so I'm not calling it done"
        return state, FinishWith(Paused(reason))
    if measured is None or not measured.complete:
        reason = "I couldn't confirm what changed in the workspace, so I'm not calling it done"
        return state, FinishWith(Paused(reason))
    observation = GateObservation(
        measured.changed_paths, facts.evidence, state.requirements,
        measured.missing_files, _work_run(state, facts), measured.deleted_paths,
    )
    gate, decision = step_gate(state.gate, observation, config)
    state = replace(state, gate=gate)
    match decision:
        case Complete(evidence=evidence):
            return state, FinishWith(VerifiedCompletion(evidence))
        case CompleteNoChanges():
            return state, FinishWith(NoChangesCompletion(measured.verified_by))
        case ForceVerification(prompt=prompt, notice=notice):
            directive = replace(_continue(state, prompt), tool_choice="required")
            return state, NextTurn(directive, notice, notice_kind="verification")
        case PauseVerificationFailed(last_check=check, stale=stale, requested=requested):
            return state, FinishWith(VerificationFailedPause(check, stale, requested))
        case PauseFilesMissing(missing=missing):
            return state, FinishWith(FilesMissingPause(missing))
        case _ as unreachable:
            assert_never(unreachable)
