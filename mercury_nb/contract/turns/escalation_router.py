"""The turn router's escalation routes: the narration guard, doom loops and provider trouble.

* The guard's trigger (:func:`guard_eligible`, :func:`guard_first`) and its first read of a
  turn that changed nothing (answer, declined change, or narration) live in
  ``guard_trigger``.
* :func:`route_guard` feeds the guard, once ``guard_trigger.read_reply`` found no answer in
  the turn; its rounds walk the chain from the provider that
  served the narrating turn (``state.providers.current``), skipping providers known to lack
  tools. It consults the tool-support decision (fed by ``tool_route``): where the guard
  would start or run another round but no model of the chain takes tools (its server said
  so, or it ignored forced tool calls), the task fails with
  :class:`~mercury_nb.contract.endings.NoToolSupport` instead.
* :func:`route_trouble` handles an attempt that failed: a refused forced ``tool_choice``
  is retried un-forced on the same provider and is no provider failure; every other
  failure, a doom loop included, goes through ``provider_policy``. A doom loop tells the
  next provider what looped, and when no provider is left it pauses naming the loop.
"""

from __future__ import annotations

from dataclasses import replace
from typing import assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    DeclinedPause,
    Ending,
    Paused,
    ProviderAttempt,
    ProviderFailure,
    WorkNotStartedPause,
)
from mercury_nb.contract.escalation import provider_policy as pp
from mercury_nb.contract.escalation.doom_loop import DoomLoop, loop_directive
from mercury_nb.contract.escalation.guard_texts import (
    FORCED_CHOICE_FALLBACK_DIRECTIVE,
    forced_choice_rejected,
)
from mercury_nb.contract.escalation.narration_guard import (
    GuardIdle,
    GuardObservation,
    GuardSatisfied,
    GuardState,
    PauseWorkNotStarted,
    RunGuardRound,
    degrade_forced_round,
    step_guard,
)
from mercury_nb.contract.escalation.tool_support import forcings_left
from mercury_nb.contract.recovery.continuation import next_max_tokens
from mercury_nb.contract.redaction import Masked
from mercury_nb.contract.turns.guard_trigger import (
    AnswerDelivered,
    ChangeDeclined,
    KeepGuarding,
    guard_eligible,
    guard_first,
    ran_for_run_task,
    read_reply,
    reply_observation,
)
from mercury_nb.contract.turns.router_state import (
    FinishWith,
    GuardRound,
    Message,
    ProviderTrouble,
    RetryStep,
    RouterDecision,
    RouterState,
    TurnDirective,
    TurnFacts,
    user,
)
from mercury_nb.contract.turns.tool_route import (
    next_tool_provider,
    no_tool_support,
    serving_lacks_tools,
)

__all__ = ["guard_eligible", "guard_first", "ran_for_run_task", "route_guard", "route_trouble"]
from mercury_nb.contract.vocabulary import TurnVerdict

LOOP_PAUSE_REASON = "I got stuck in a loop on every model I could try (last: {description})"
"""The reason of the honest pause when a doom loop used up the provider chain."""


def route_guard(
    state: RouterState, facts: TurnFacts, config: MercuryConfig
) -> tuple[RouterState, RouterDecision | None]:
    """Feed the guard a ``text-stop`` or ``steps-exhausted`` turn end, or a forced round's
    prose cut by the output limit (``state.tools`` already holds what the turn showed).

    None means the guard has nothing to do (idle, or satisfied just now by a mutation): the
    verdict's own route (gate, step budget) follows. A round that no model of the chain can
    answer (no tool support) is not run: the task fails; a round goes to a provider of the
    chain not known to lack tools. After the user's own Deny (and no change) the guard does
    not force: the task pauses (the ending names the denial, ``after_user_denial``)."""
    if not state.guard.active and (
        facts.verdict is not TurnVerdict.TEXT_STOP or not guard_eligible(state, facts, config)
    ):
        return state, None
    if facts.user_denied and facts.mutations_in_task == 0:  # never forced past the user's no
        stopped = replace(state, guard=GuardState(), guard_round=None)
        return stopped, FinishWith(WorkNotStartedPause(facts.last_failed_mutation))
    offer = False
    if guard_eligible(state, facts, config):  # nothing changed yet: an answer, or narration?
        match read_reply(reply_observation(state, facts)):
            case AnswerDelivered():
                return replace(state, guard=GuardState(), guard_round=None), None
            case ChangeDeclined(reason=reason):
                stopped = replace(state, guard=GuardState(), guard_round=None)
                return stopped, FinishWith(DeclinedPause(reason))
            case KeepGuarding(offer_no_change=offer):
                pass
            case _ as unread:
                assert_never(unread)
    obs = GuardObservation(
        verdict=facts.verdict,
        mutated=facts.mutations_in_task > 0 or ran_for_run_task(state, facts, config),
        reply_text=facts.reply_text,
        provider_index=state.providers.current,
        last_failed_mutation=facts.last_failed_mutation,
        lacks_tools=serving_lacks_tools(state, facts, config),
        forcings_left=forcings_left(state.tools, len(config.model_chain), config),
        offer_no_change=offer,
    )
    guard, decision = step_guard(state.guard, obs, config)
    state = replace(state, guard=guard)
    if isinstance(decision, RunGuardRound | PauseWorkNotStarted):
        no_tools = no_tool_support(state, config)
        if no_tools is not None:
            return replace(state, guard=GuardState(), guard_round=None), FinishWith(no_tools)
    match decision:
        case GuardIdle() | GuardSatisfied():
            return replace(state, guard_round=None), None
        case RunGuardRound() as round_:
            fresh = facts.verdict is not TurnVerdict.TEXT_STOP
            return _start_round(state, round_, fresh, config)
        case PauseWorkNotStarted(failure=failure):
            return replace(state, guard_round=None), FinishWith(WorkNotStartedPause(failure))
        case _ as unreachable:
            assert_never(unreachable)


def _start_round(
    state: RouterState, round_: RunGuardRound, fresh_budget: bool, config: MercuryConfig
) -> tuple[RouterState, GuardRound]:
    target = next_tool_provider(state, round_.provider_index, config)
    providers = pp.use_provider(state.providers, target)
    guard = state.guard
    if providers.current != round_.provider_index:  # that provider refused us for good
        round_ = replace(round_, provider_index=providers.current)
        if providers.current in guard.forced_rejected:
            guard, round_ = degrade_forced_round(guard, round_)
    directive = TurnDirective(
        messages=(user(round_.directive),),
        tool_choice=round_.tool_choice,
        tool_names=round_.tools,
        provider_index=providers.current,
        must_mutate=round_.must_mutate,
    )
    state = replace(state, providers=providers, guard=guard, guard_round=round_)
    return state, GuardRound(round_, directive, round_.grounding, round_.notice, fresh_budget)


def forced_choice_refused(trouble: ProviderTrouble) -> bool:
    """A forced first step refused before any output for its ``tool_choice`` (thinking models)."""
    return (
        trouble.tool_choice == "required"
        and not trouble.streamed_output
        and forced_choice_rejected(trouble.status, trouble.message)
    )


def route_trouble(
    state: RouterState, facts: TurnFacts, config: MercuryConfig
) -> tuple[RouterState, RouterDecision]:
    """An attempt failed (or was stopped as a loop): retry, fall back, or end honestly."""
    trouble = facts.trouble or ProviderTrouble(
        provider=state.providers.provider,
        message=Masked("the stream ended without a finish reason"),  # our own words
        kind="interrupted", streamed_output=True,
    )
    if facts.doom is None and forced_choice_refused(trouble):
        return _unforced_retry(state, trouble)
    lowered = None if facts.doom else _lowered_cap(state, trouble, config)
    if lowered is not None:
        index = state.providers.current
        caps = (*(c for c in state.output_caps if c[0] != index), (index, lowered))
        state = replace(state, output_caps=caps)
        return state, RetryStep(_same_first_step(state, trouble, index), None, 0.0, lowered)
    failure = pp.FailedAttempt(
        message=trouble.message, status=trouble.status, kind=trouble.kind,
        streamed_output=trouble.streamed_output, retry_after_s=trouble.retry_after_s,
    )
    providers, decision = pp.step_provider(state.providers, failure, config, facts.jitter)
    state = replace(state, providers=providers)
    match decision:
        case pp.RetrySame(delay_s=delay, continuation=note):
            return state, RetryStep(_retry_directive(state, trouble, facts.doom, note), None, delay)
        case pp.SwitchProvider(notice=notice, continuation=note):
            return state, RetryStep(_retry_directive(state, trouble, facts.doom, note), notice)
        case pp.AllProvidersFailed(message=message):
            return state, FinishWith(_all_failed(state, facts.doom, message, trouble))
        case _ as unreachable:
            assert_never(unreachable)


def _all_failed(
    state: RouterState, doom: DoomLoop | None, message: Masked, trouble: ProviderTrouble
) -> Ending:
    if doom is not None:
        return Paused(LOOP_PAUSE_REASON.format(description=doom.description))
    if trouble.kind == pp.EMPTY_REPLY_KIND:
        return Paused(pp.EMPTY_REPLIES_PAUSE.format(provider=trouble.provider))
    refused = pp.refused(state.providers)
    attempts = tuple(ProviderAttempt(n, r, n in refused) for n, r in state.providers.ledger.items())
    return ProviderFailure(last_error=state.providers.last_error or message, providers=attempts)


def _unforced_retry(state: RouterState, trouble: ProviderTrouble) -> tuple[RouterState, RetryStep]:
    """Retry at once, same provider, ``tool_choice`` auto and the same tools. A guard round
    is degraded (remembered for the provider's later rounds) and gets the blunt directive."""
    index = state.providers.current
    messages: tuple[Message, ...] = ()
    tool_names = trouble.tool_names
    must_mutate = _round_must_mutate(state)
    if state.guard.active and state.guard_round is not None:
        in_flight = replace(state.guard_round, provider_index=index)
        guard, degraded = degrade_forced_round(state.guard, in_flight)
        state = replace(state, guard=guard, guard_round=degraded)
        if degraded.must_mutate:  # an offered round's directive already asks for any call
            messages = (user(FORCED_CHOICE_FALLBACK_DIRECTIVE),)
        tool_names = degraded.tools  # every tool: the fallback directive restricts
    directive = TurnDirective(messages, "auto", tool_names, index, must_mutate=must_mutate)
    return state, RetryStep(directive)


def _round_must_mutate(state: RouterState) -> bool:
    """A guard round is in flight whose first step must mutate (not one offering no change)."""
    return state.guard.active and state.guard_round is not None and state.guard_round.must_mutate


def _same_first_step(state: RouterState, trouble: ProviderTrouble, index: int) -> TurnDirective:
    """The failed request's tool choice and tools again, un-forced for a provider that
    refused a forced choice during this escalation."""
    choice = trouble.tool_choice
    if choice == "required" and index in state.guard.forced_rejected:
        choice = "auto"
    return TurnDirective((), choice, trouble.tool_names, index,
                         must_mutate=_round_must_mutate(state))


def _retry_directive(
    state: RouterState, trouble: ProviderTrouble, doom: DoomLoop | None, note: str | None
) -> TurnDirective:
    index = state.providers.current
    if doom is not None:
        return TurnDirective(messages=(user(loop_directive(doom)),), provider_index=index)
    if trouble.streamed_output:
        messages = (user(note),) if note else ()
        return TurnDirective(messages=messages, provider_index=index)
    return _same_first_step(state, trouble, index)


_NOT_A_REJECTION = frozenset({"interrupted", "timeout"})


def _lowered_cap(state: RouterState, trouble: ProviderTrouble, config: MercuryConfig) -> int | None:
    """Halve ``max_tokens`` for a provider that rejected it before any output. A stream that
    broke or was cut (``interrupted``, ``timeout``: a reply longer than ``max_tokens`` allows
    names it too) rejected nothing: it takes the retry path."""
    if trouble.streamed_output or trouble.status not in (None, 400, 413, 422):
        return None
    if trouble.kind in _NOT_A_REJECTION:
        return None
    current = state.output_cap(state.providers.current, config.max_output_tokens)
    return next_max_tokens(current, trouble.message, config.min_output_tokens)
