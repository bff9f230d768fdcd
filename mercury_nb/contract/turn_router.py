"""Routes each turn-end verdict to its recovery path: the loop's one pure decision point."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, assert_never

from mercury_nb.contract import provider_policy as pp
from mercury_nb.contract.completion_gate import (
    Complete,
    CompleteNoChanges,
    ForceVerification,
    GateObservation,
    GateState,
    PauseVerificationFailed,
    decide_completion,
)
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.continuation import (
    AutoContinue,
    PauseStepBudget,
    PauseTruncated,
    ResumeTruncated,
    StepBudgetState,
    TruncationObservation,
    TruncationState,
    next_max_tokens,
    on_steps_exhausted,
    on_truncated,
)
from mercury_nb.contract.endings import (
    Aborted,
    Ending,
    NoChangesCompletion,
    Paused,
    ProviderAttempt,
    ProviderFailure,
    StepBudgetPause,
    TruncationPause,
    VerificationFailedPause,
    VerifiedCompletion,
)
from mercury_nb.contract.task_intent import TaskIntent, classify_intent
from mercury_nb.contract.turn_verdict import TurnVerdict
from mercury_nb.contract.verification import EvidenceVerdict, NoCheck
from mercury_nb.transport.protocol import ToolChoice

Message = dict[str, Any]


@dataclass(frozen=True)
class TurnDirective:
    """How the next turn starts: messages to append, and the first step's tool choice."""

    messages: tuple[Message, ...] = ()
    tool_choice: ToolChoice = "auto"
    tool_names: tuple[str, ...] | None = None
    provider_index: int = 0


@dataclass(frozen=True)
class ProviderTrouble:
    """A request failed: before any output (``streamed_output`` False) or mid-stream."""

    provider: str
    message: str
    status: int | None = None
    kind: str = "error"
    retry_after_s: float | None = None
    streamed_output: bool = False


@dataclass(frozen=True)
class Measured:
    """The change summary measured on disk when the turn ended."""

    changed_paths: tuple[str, ...]
    verified_by: Literal["git", "snapshot"]
    complete: bool = True


@dataclass(frozen=True)
class TurnFacts:
    """Everything the router needs about the turn that just ended. No I/O inside."""

    verdict: TurnVerdict
    reply_text: str = ""
    cut_write: bool = False
    cut_write_path: str | None = None
    trouble: ProviderTrouble | None = None
    measured: Measured | None = None
    evidence: EvidenceVerdict = field(default_factory=NoCheck)
    jitter: float = 0.0


@dataclass(frozen=True)
class RouterState:
    task: str
    intent: TaskIntent
    gate: GateState
    budget: StepBudgetState
    truncation: TruncationState
    providers: pp.ProviderState
    output_caps: tuple[tuple[int, int], ...] = ()
    """Lowered ``max_tokens`` per provider index, kept for the rest of the task."""

    def output_cap(self, index: int, default: int) -> int:
        return dict(self.output_caps).get(index, default)

    @classmethod
    def start(cls, task: str, config: MercuryConfig) -> RouterState:
        return cls(
            task=task,
            intent=classify_intent(task, config.mode),
            gate=GateState(),
            budget=StepBudgetState(),
            truncation=TruncationState(),
            providers=pp.ProviderState(chain=config.model_chain),
        )


@dataclass(frozen=True)
class FinishWith:
    ending: Ending


@dataclass(frozen=True)
class NextTurn:
    directive: TurnDirective
    notice: str | None = None
    fresh_budget: bool = False


@dataclass(frozen=True)
class RetryStep:
    """Ask again (same or next provider) after ``delay_s``; ``directive.messages`` may
    carry a continue-from-partial note."""

    directive: TurnDirective
    notice: str | None = None
    delay_s: float = 0.0
    output_cap: int | None = None
    """A lowered ``max_tokens`` for the provider being retried, if the error asked for it."""


RouterDecision = FinishWith | NextTurn | RetryStep


def _user(text: str) -> Message:
    return {"role": "user", "content": text}


def decide_after_turn(
    state: RouterState, facts: TurnFacts, config: MercuryConfig
) -> tuple[RouterState, RouterDecision]:
    """One decision per turn end; exhaustive over the five verdicts."""
    match facts.verdict:
        case TurnVerdict.ABORTED:
            return state, FinishWith(Aborted())
        case TurnVerdict.INTERRUPTED:
            return _on_trouble(state, facts, config)
        case TurnVerdict.TRUNCATED:
            obs = TruncationObservation(cut_write=facts.cut_write, path=facts.cut_write_path)
            truncation, t_decision = on_truncated(state.truncation, obs, config)
            state = replace(state, truncation=truncation, providers=pp.record_success(state.providers))
            match t_decision:
                case ResumeTruncated(prompt=prompt):
                    return state, NextTurn(_continue(state, prompt), fresh_budget=True)
                case PauseTruncated(rounds=rounds):
                    return state, FinishWith(TruncationPause(rounds))
                case _ as never_t:
                    assert_never(never_t)
        case TurnVerdict.STEPS_EXHAUSTED:
            budget, s_decision = on_steps_exhausted(state.budget, state.task, config)
            state = replace(state, budget=budget, providers=pp.record_success(state.providers))
            match s_decision:
                case AutoContinue(nudge=nudge, notice=notice):
                    return state, NextTurn(_continue(state, nudge), notice, fresh_budget=True)
                case PauseStepBudget(continuations=n):
                    return state, FinishWith(StepBudgetPause(n))
                case _ as never_s:
                    assert_never(never_s)
        case TurnVerdict.TEXT_STOP:
            state = replace(state, providers=pp.record_success(state.providers))
            return _on_text_stop(state, facts, config)
        case _ as unreachable:
            assert_never(unreachable)


def _continue(state: RouterState, text: str) -> TurnDirective:
    return TurnDirective(messages=(_user(text),), provider_index=state.providers.current)


def _on_text_stop(
    state: RouterState, facts: TurnFacts, config: MercuryConfig
) -> tuple[RouterState, RouterDecision]:
    measured = facts.measured
    if measured is None or not measured.complete:
        reason = "I couldn't confirm what changed in the workspace, so I'm not calling it done"
        return state, FinishWith(Paused(reason))
    gate, decision = decide_completion(
        state.gate, GateObservation(measured.changed_paths, facts.evidence), config
    )
    state = replace(state, gate=gate)
    match decision:
        case Complete(evidence=evidence):
            return state, FinishWith(VerifiedCompletion(evidence))
        case CompleteNoChanges():
            return state, FinishWith(NoChangesCompletion(measured.verified_by))
        case ForceVerification(prompt=prompt, notice=notice):
            directive = replace(_continue(state, prompt), tool_choice="required")
            return state, NextTurn(directive, notice)
        case PauseVerificationFailed(last_check=check, stale=stale):
            return state, FinishWith(VerificationFailedPause(check, stale))
        case _ as unreachable:
            assert_never(unreachable)


def _on_trouble(
    state: RouterState, facts: TurnFacts, config: MercuryConfig
) -> tuple[RouterState, RouterDecision]:
    trouble = facts.trouble or ProviderTrouble(
        provider=state.providers.provider, message="the stream ended without a finish reason",
        kind="interrupted", streamed_output=True,
    )
    lowered = _lowered_cap(state, trouble, config)
    if lowered is not None:
        index = state.providers.current
        caps = (*(c for c in state.output_caps if c[0] != index), (index, lowered))
        state = replace(state, output_caps=caps)
        return state, RetryStep(TurnDirective(provider_index=index), None, 0.0, lowered)
    failure = pp.ProviderFailure(
        message=trouble.message, status=trouble.status, kind=trouble.kind,
        streamed_output=trouble.streamed_output, retry_after_s=trouble.retry_after_s,
    )
    providers, decision = pp.step_provider(state.providers, failure, config, facts.jitter)
    state = replace(state, providers=providers)
    match decision:
        case pp.RetrySame(delay_s=delay, continuation=note):
            messages = (_user(note),) if note else ()
            directive = TurnDirective(messages=messages, provider_index=providers.current)
            return state, RetryStep(directive, None, delay)
        case pp.SwitchProvider(next_index=index, notice=notice, continuation=note):
            messages = (_user(note),) if note else ()
            return state, RetryStep(TurnDirective(messages=messages, provider_index=index), notice)
        case pp.AllProvidersFailed(message=message):
            attempts = tuple(ProviderAttempt(n, r) for n, r in providers.ledger.items())
            last = providers.last_error or message
            return state, FinishWith(ProviderFailure(last_error=last, providers=attempts))
        case _ as unreachable:
            assert_never(unreachable)


def _lowered_cap(state: RouterState, trouble: ProviderTrouble, config: MercuryConfig) -> int | None:
    """Halve ``max_tokens`` for a provider that rejected it before any output."""
    if trouble.streamed_output or trouble.status not in (None, 400, 413, 422):
        return None
    current = state.output_cap(state.providers.current, config.max_output_tokens)
    return next_max_tokens(current, trouble.message, config.min_output_tokens)
