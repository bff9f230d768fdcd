"""The narration guard as a pure state machine: forced, rotated rounds, a wake-up, then a pause.

Feed :func:`step_guard` the end of every turn. It stays idle until an execute-mode
``text-stop`` turn landed no successful mutating tool call and did not end by asking the
user. Then it runs guard rounds until one lands a mutation:

* round 1 carries the agent-made grounding listing. When the task's demand for a change is
  unclear (``offer_no_change``, decided by ``turns.guard_trigger``), round 1 forces a tool call
  but not a mutation: it offers the typed "no change needed" choice (``finish`` with status
  ``no_change``), and reading before answering steps on as in any turn;
* every round's first step is forced: ``tool_choice`` required with every tool offered (the
  same tools array as every other request, so a server's prompt-prefix cache stays warm),
  the directive naming the mutating tools to call; a reply whose calls are none of them
  mutating fails the round. On a provider that already refused a forced choice, the step
  is sent with ``tool_choice`` auto, the same tools and a blunt directive that only a
  mutating call counts (see :func:`degrade_forced_round`);
* rounds walk the provider chain starting AT the provider that served the narrating turn:
  round 1 goes to that provider (now forced, which it has not been yet), and each later
  round goes to the provider after the one that actually served the previous round. With
  chain ``[a, b, c]`` and ``b`` serving the turn, rounds go ``b, c, a, b, …``. Never
  from the default provider ``a``: that would skip forcing the provider that narrated;
* after ``config.guard_rounds`` failed rounds the wake-up call opens a second cycle with
  fresh grounding, up to ``config.guard_rounds_total`` rounds in all;
* a round answered in prose (a blocker, a question, or prose cut by the output limit) is a
  failed round: only a typed ``finish(blocked|question)``, read by the router, ends it, or,
  read first by ``turns.guard_trigger``, a ``finish(no_change)`` or an answer after
  investigation in a task that does not plainly demand a change;
* then :class:`PauseWorkNotStarted` names the last failed mutating-tool result.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import Blocker
from mercury_nb.contract.escalation.guard_texts import (
    FORCED_CHOICE_FALLBACK_DIRECTIVE,
    FORCED_ROUND_DIRECTIVE,
    NO_CHANGE_OFFER_DIRECTIVE,
    NO_CHANGE_OFFER_NOTICE,
    SECOND_CYCLE_NOTICE,
    asks_user,
    format_blocker,
    guard_round_notice,
    wake_up_directive,
)
from mercury_nb.contract.recovery.bounded import GiveUp, bounded
from mercury_nb.contract.vocabulary import TurnVerdict

FailedMutation = Blocker
"""A mutating tool call that failed, with the result text the model saw: the same type as
the ending's :class:`~mercury_nb.contract.endings.Blocker`, so the pause carries it as is."""


@dataclass(frozen=True)
class GuardObservation:
    """How a turn (or a guard round) ended, as the guard needs to know it."""

    verdict: TurnVerdict
    mutated: bool
    """At least one mutating tool call succeeded during the turn."""
    reply_text: str
    """The turn's final reply text."""
    provider_index: int
    """Index in ``config.model_chain`` of the provider that actually served the turn."""
    last_failed_mutation: FailedMutation | None = None
    """The turn's last failed mutating tool call, if any."""
    lacks_tools: bool = False
    """The serving provider is known to lack tools, or ignored this forced step: a closing
    question in prose does not hold the guard off (only a typed ``finish`` would)."""
    forcings_left: int | None = None
    """Forced rounds answered in prose that would show no provider of the chain takes tools
    (which ends the task): the first cycle's real bound when it is below ``guard_rounds``;
    None when some provider made a tool call."""
    offer_no_change: bool = False
    """The task's demand for a change is unclear: a first round offers the typed "no change
    needed" choice instead of forcing a mutation."""


@dataclass(frozen=True)
class GuardState:
    """``round`` is 0 while idle, else the number of the round in flight."""

    round: int = 0
    blocker: str | None = None
    failure: FailedMutation | None = None
    """The last failed mutating tool call seen since the guard started."""
    forced_rejected: frozenset[int] = frozenset()
    """Providers that refused a forced ``tool_choice`` during this escalation."""

    @property
    def active(self) -> bool:
        return self.round > 0


@dataclass(frozen=True)
class GuardIdle:
    """No escalation: the turn did work, asked the user, was chat, or did not text-stop."""


@dataclass(frozen=True)
class RunGuardRound:
    """Run guard round ``round`` on provider ``provider_index`` of the chain.

    Show ``notice`` to the user; append ``directive`` (after the grounding listing when
    ``grounding`` is set) to the conversation; send the round's first step with
    :attr:`tool_choice` and :attr:`tools` (None: every tool, as on every other step; the
    directive, and for a forced round ``tool_choice``, restrict it to a mutating call).
    """

    round: int
    provider_index: int
    grounding: bool
    wake_up: bool
    notice: str
    directive: str
    forced: bool = True
    tools: tuple[str, ...] | None = None
    offer_no_change: bool = False
    """The round offers the typed "no change needed" choice: its forced step needs a tool
    call, not a mutation (a read steps on; see the module)."""

    @property
    def tool_choice(self) -> Literal["required", "auto"]:
        return "required" if self.forced else "auto"

    @property
    def must_mutate(self) -> bool:
        """The round's first step fails unless one of its calls mutates."""
        return not self.offer_no_change


@dataclass(frozen=True)
class GuardSatisfied:
    """The escalation ended well: a mutation landed. (A typed ``finish(blocked|question)``
    ends it too, read by the router before the guard; a prose one fails the round.)"""

    reason: Literal["mutation"] = "mutation"


@dataclass(frozen=True)
class PauseWorkNotStarted:
    """Every round failed: pause honestly with the work-not-started banner.

    ``blocker`` is ``<tool>: <result, first config.blocker_chars chars>``; ``failure`` is the
    same failed call unformatted, for banner code that formats it itself."""

    blocker: str | None
    rounds: int
    failure: FailedMutation | None = None


GuardDecision = GuardIdle | RunGuardRound | GuardSatisfied | PauseWorkNotStarted


def starts_guard(obs: GuardObservation, config: MercuryConfig) -> bool:
    """Execute mode, a ``text-stop``, no successful mutation, no closing question (unless
    the provider lacks tools: its question cannot lead to a change)."""
    return (
        config.mode == "execute"
        and obs.verdict is TurnVerdict.TEXT_STOP
        and not obs.mutated
        and (obs.lacks_tools or not asks_user(obs.reply_text))
    )


def forced_step_failed(must_mutate: bool, first_step: bool, calls: int, mutating: int) -> bool:
    """A guard round's forced first step whose tool calls ran but none of them mutated:
    the round failed, the turn ends there (instead of stepping on with ``auto``)."""
    return must_mutate and first_step and calls > 0 and mutating == 0


def step_guard(
    state: GuardState, obs: GuardObservation, config: MercuryConfig
) -> tuple[GuardState, GuardDecision]:
    """Advance the guard by one observed turn end."""
    if obs.verdict is TurnVerdict.ABORTED:
        return GuardState(), GuardIdle()
    if not state.active:
        if not starts_guard(obs, config):
            return state, GuardIdle()
        started = _with_blocker(GuardState(), obs, config)
        return _next_round(started, obs.provider_index, obs.forcings_left, config,
                           offer=obs.offer_no_change)
    if obs.mutated:
        return GuardState(), GuardSatisfied("mutation")
    # a prose blocker or question in a round is a failed round: only a typed finish ends it
    failed = _with_blocker(state, obs, config)
    if isinstance(bounded(failed.round, config.guard_rounds_total), GiveUp):
        return GuardState(), PauseWorkNotStarted(failed.blocker, failed.round, failed.failure)
    chain_length = len(config.model_chain)
    return _next_round(failed, (obs.provider_index + 1) % chain_length, obs.forcings_left,
                       config)


def degrade_forced_round(
    state: GuardState, decision: RunGuardRound
) -> tuple[GuardState, RunGuardRound]:
    """The provider refused the forced ``tool_choice``: retry the same round with
    ``tool_choice`` auto, the same tools and the blunt fallback directive.

    The provider is remembered, so its later rounds are sent degraded straight away.
    """
    remembered = replace(state, forced_rejected=state.forced_rejected | {decision.provider_index})
    return remembered, _degraded(decision)


def _next_round(
    state: GuardState, provider_index: int, forcings_left: int | None, config: MercuryConfig,
    *, offer: bool = False,
) -> tuple[GuardState, RunGuardRound]:
    number = state.round + 1
    first_cycle = number <= config.guard_rounds
    wake_up = number == config.guard_rounds + 1
    # "attempt N of M": M is the cycle's bound, or fewer when the chain would be known to
    # lack tools (and the task end) sooner
    of = config.guard_rounds if forcings_left is None \
        else max(number, min(config.guard_rounds, state.round + forcings_left))
    decision = RunGuardRound(
        round=number,
        provider_index=provider_index % len(config.model_chain),
        grounding=number == 1 or wake_up,
        wake_up=wake_up,
        notice=guard_round_notice(number, of) if first_cycle else SECOND_CYCLE_NOTICE,
        directive=wake_up_directive(config.guard_rounds) if wake_up else FORCED_ROUND_DIRECTIVE,
    )
    if offer and number == 1:
        decision = replace(decision, notice=NO_CHANGE_OFFER_NOTICE,
                           directive=NO_CHANGE_OFFER_DIRECTIVE, offer_no_change=True)
    if decision.provider_index in state.forced_rejected:
        decision = _degraded(decision)
    return replace(state, round=number), decision


def _degraded(decision: RunGuardRound) -> RunGuardRound:
    if not decision.forced:
        return decision
    if decision.offer_no_change:  # its directive already asks for a tool call, any one
        return replace(decision, forced=False)
    directive = f"{decision.directive}\n\n{FORCED_CHOICE_FALLBACK_DIRECTIVE}"
    return replace(decision, forced=False, directive=directive)


def _with_blocker(state: GuardState, obs: GuardObservation, config: MercuryConfig) -> GuardState:
    failure = obs.last_failed_mutation
    if failure is None:
        return state
    blocker = format_blocker(failure.tool, failure.result, config.blocker_chars)
    return replace(state, blocker=blocker, failure=failure)
