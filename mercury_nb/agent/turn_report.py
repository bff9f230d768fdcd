"""What the loop saw when an attempt at a turn stopped: one small report per situation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, assert_never

from mercury_nb.contract.endings import WindowTooSmall
from mercury_nb.contract.escalation.doom_loop import DoomLoop
from mercury_nb.contract.escalation.provider_policy import DOOM_LOOP_KIND
from mercury_nb.contract.redaction import Masked, mask_once
from mercury_nb.contract.spend import BudgetHit
from mercury_nb.contract.turns.final_reply import FinishCall
from mercury_nb.contract.turns.router_state import STALL_KIND, ProviderTrouble
from mercury_nb.contract.turns.stream_assembly import StepReply
from mercury_nb.contract.turns.turn_verdict import TurnVerdict

if TYPE_CHECKING:
    from mercury_nb.agent.session import TaskSession
    from mercury_nb.agent.stall_watch import AttemptStalled
    from mercury_nb.transport.protocol import ModelRequest, ProviderError


@dataclass(frozen=True)
class Ended:
    """The turn ended by itself: a prose stop, a used-up step budget or a reply the output
    limit cut (``verdict``: ``TEXT_STOP``, ``STEPS_EXHAUSTED`` or ``TRUNCATED``)."""

    verdict: TurnVerdict
    reply: StepReply
    reply_cap: int
    """``max_tokens`` of the turn's last request."""
    finish: FinishCall | None = None
    """The model ended the turn with a ``finish`` call (its answer is the final reply)."""


@dataclass(frozen=True)
class Interrupted:
    """The stream of the turn's last step broke off without a finish reason."""

    reply: StepReply
    trouble: ProviderTrouble
    reply_cap: int


@dataclass(frozen=True)
class ProviderFailed:
    """The request failed before any output."""

    trouble: ProviderTrouble


@dataclass(frozen=True)
class Stalled:
    """The stall watchdog cut the request (``trouble`` carries the stall report)."""

    reply: StepReply
    trouble: ProviderTrouble


@dataclass(frozen=True)
class Looped:
    """The doom-loop detector stopped the attempt; the work done so far is kept."""

    loop: DoomLoop
    reply: StepReply
    trouble: ProviderTrouble


@dataclass(frozen=True)
class Pressured:
    """Memory or context pressure outlasted compaction: the governor paused the task before
    the next request, for ``why`` (the banner's words). No turn ended."""

    why: str


@dataclass(frozen=True)
class CannotFit:
    """The window cannot hold what every request carries: the task fails, nothing sent."""

    ending: WindowTooSmall


@dataclass(frozen=True)
class OverBudget:
    """A spending budget was reached: the task pauses before the next request. No turn ended."""

    hit: BudgetHit


@dataclass(frozen=True)
class NeedsPermission:
    """An action was denied because nobody could allow it: the task pauses, naming it and
    how to allow it (``why``). No turn ended."""

    why: str


TurnReport = (Ended | Interrupted | ProviderFailed | Stalled | Looped | Pressured | CannotFit
              | OverBudget | NeedsPermission)


def verdict_of(report: TurnReport) -> TurnVerdict | None:
    """The verdict of the turn that ended; None when the governor or the window stopped the
    task before a request (the task's last verdict stays that of the last turn that ran)."""
    match report:
        case Ended(verdict=verdict):
            return verdict
        case Interrupted() | ProviderFailed() | Stalled() | Looped():
            return TurnVerdict.INTERRUPTED
        case Pressured() | CannotFit() | OverBudget() | NeedsPermission():
            return None
        case _ as unreachable:
            assert_never(unreachable)


def ended(
    verdict: TurnVerdict, reply: StepReply, provider: str, reply_cap: int,
    after_output: bool = False, finish: FinishCall | None = None, secrets: tuple[str, ...] = (),
) -> Ended | Interrupted:
    """The report of a turn whose last step came back (``verdict``: its classification).
    ``after_output``: a tool call of this turn completed, so an interrupted attempt continues
    the turn; otherwise the same request is retried cleanly (the cut text is dropped, never
    part of an answer). ``finish``: the step's ``finish`` call. ``secrets``: the task's
    (:func:`~mercury_nb.contract.redaction.known_secrets`), masked in the stream's error once."""
    if verdict is not TurnVerdict.INTERRUPTED:
        return Ended(verdict, reply, reply_cap, finish)
    message = mask_once(reply.error or "the stream ended without a finish reason", secrets)
    trouble = ProviderTrouble(provider=provider, message=message, kind="interrupted",
                              streamed_output=after_output)
    return Interrupted(reply, trouble, reply_cap)


def provider_failed(
    error: ProviderError, secrets: tuple[str, ...], request: ModelRequest | None = None,
    tool_names: tuple[str, ...] | None = None, after_output: bool = False,
) -> ProviderFailed:
    """The request failed before any output. ``after_output``: a tool already completed
    in this turn, so the turn is partial and the next attempt continues it. ``secrets``: the
    task's; the error's message is masked with them here, once, unless the transport did
    (``error.masked``): no notice, ledger row or banner masks it again."""
    # a provider's error body may echo a key: masked before any notice, ledger or banner
    message = Masked(error.message) if error.masked else mask_once(error.message, secrets)
    return ProviderFailed(ProviderTrouble(
        provider=error.provider, message=message, status=error.status,
        kind=error.kind, retry_after_s=error.retry_after_s, streamed_output=after_output,
        tool_choice=request.tool_choice if request is not None else "auto",
        tool_names=tool_names,
    ))


def stalled_turn(
    session: TaskSession, stalled: AttemptStalled, provider: str, request: ModelRequest,
    tool_names: tuple[str, ...] | None, did_work: bool,
) -> Stalled:
    """The report of a request the stall watchdog cut: the attempt is interrupted, named by
    the stall. What had streamed of the cut reply is dropped (never part of an answer); the
    turn continues only when a tool call of it completed (``did_work``)."""
    text = stalled.stall.text
    reply = stalled.assembly.reply(error=text, step=session.steps_total)
    return Stalled(reply, ProviderTrouble(
        provider=provider, message=Masked(text),  # the watchdog's own words
        kind=STALL_KIND, streamed_output=did_work,
        tool_choice=request.tool_choice, tool_names=tool_names,
    ))


def looped(loop: DoomLoop, reply: StepReply, provider: str, secrets: tuple[str, ...]) -> Looped:
    """The doom-loop detector stopped the attempt; the work done so far is kept. Its
    description quotes the model's calls: masked with the task's ``secrets``, once."""
    trouble = ProviderTrouble(provider=provider, message=mask_once(loop.description, secrets),
                              kind=DOOM_LOOP_KIND)
    return Looped(loop, reply, trouble)
