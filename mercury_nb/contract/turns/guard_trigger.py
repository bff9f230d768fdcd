"""When the narration guard runs: its trigger as the task sees it, and answer or narration.

* :func:`guard_eligible`: execute mode, a task that asks for work, no successful mutating
  tool call in the whole task, nothing changed on disk (measured), and, for a task that asks
  to run something, no command run (:func:`ran_for_run_task`: the model acted; the gate
  judges the run). The reply-level rules (a ``text-stop`` that does not end by asking the
  user) belong to :func:`~mercury_nb.contract.escalation.narration_guard.step_guard`.
* :func:`guard_first`: whether a ``text-stop`` reply goes to the guard before the router
  reads it as a blocker or a question (only a typed ``finish`` skips it).
* :func:`read_reply`: in a guard-eligible task, whether the turn that just ended answers the
  task or narrates, by the task's :class:`~mercury_nb.contract.gate.change_demand.
  ChangeDemand`, matched exhaustively:

  - **demanded** ("Create hello.py…", "Fix the failing test"): the guard runs as it always
    has, forcing a mutation. The typed "no change needed" (``finish`` ``no_change``) is no
    way out into a completion: it ends as :class:`ChangeDeclined`, an honest pause naming
    that the model declined to change anything;
  - **unclear** (a question phrased as an instruction, "Look through the notes folder and tell
    me which file mentions the budget"): the typed "no change needed" ends the task as an
    answer, and so does a final reply that reads as one
    (:func:`~mercury_nb.contract.turns.answer_reading.reads_as_answer`) after the task
    investigated (a read, a listing, a read-only command). Anything else — narration, an
    answer nothing was read for, a reply cut short — keeps the guard, whose first round then
    offers the typed choice instead of forcing a mutation.

  An answer ends on the gate's own path: nothing changed, so "Response delivered · no file
  changes (git-verified)", never "Task complete".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.gate.change_demand import ChangeDemand
from mercury_nb.contract.gate.task_intent import TaskIntent
from mercury_nb.contract.turns.answer_reading import reads_as_answer
from mercury_nb.contract.turns.final_reply import Blocked, FinishCall, classify_final_reply
from mercury_nb.contract.turns.router_state import RouterState, TurnFacts
from mercury_nb.contract.turns.tool_route import serving_lacks_tools
from mercury_nb.contract.turns.turn_verdict import TurnVerdict

NO_REASON_GIVEN = "it gave no reason"
"""The reason of a declined change whose ``finish`` call said nothing."""


def guard_eligible(state: RouterState, facts: TurnFacts, config: MercuryConfig) -> bool:
    """Execute mode, a work task, no successful mutation in the task, nothing changed on
    disk, and no command run in a task that asks to run something."""
    measured = facts.measured
    return (
        config.mode == "execute"
        and state.intent is TaskIntent.WORK
        and facts.mutations_in_task == 0
        and measured is not None
        and measured.complete
        and not measured.changed_paths
        and not ran_for_run_task(state, facts, config)
    )


def ran_for_run_task(state: RouterState, facts: TurnFacts, config: MercuryConfig) -> bool:
    """A work task that asks to run something ran a command: for the guard, that is the
    work attempted (a read-only ``ls -la`` or a check is no mutation); whether it was the
    run asked for, and whether it passed, is the gate's (one forced round, then a pause)."""
    return (
        config.mode == "execute"
        and state.intent is TaskIntent.WORK
        and facts.run is not None
        and facts.run.commands_run > 0
    )


def guard_first(state: RouterState, facts: TurnFacts, config: MercuryConfig) -> bool:
    """A ``text-stop`` reply goes to the guard before it is read as a blocker or a question.

    In a guard-eligible task (nothing changed yet), unless it is a typed ``finish`` other than
    ``done`` (``blocked`` and ``question`` end the task; ``no_change`` is read by
    :func:`read_reply`): while the guard is in flight (a prose blocker or question fails the
    round), when the serving provider lacks tools (its server said so, or it ignored this
    forced step), or when the prose says it cannot do the work (a narrating "I can't access
    your files" on a model that has the tools to)."""
    if facts.finish is not None and facts.finish.status != "done":
        return False
    if not guard_eligible(state, facts, config):
        return False
    if state.guard.active or serving_lacks_tools(state, facts, config):
        return True
    return isinstance(classify_final_reply(None, facts.reply_text, work_done=False), Blocked)


@dataclass(frozen=True)
class ReplyObservation:
    """A guard-eligible turn end as :func:`read_reply` needs it."""

    demand: ChangeDemand
    final: bool
    """The turn ended ``text-stop``: ``reply_text`` is its complete final reply."""
    reply_text: str
    finish: FinishCall | None = None
    """The typed ``finish`` call that ended the turn, if any."""
    investigations: int = 0
    """Non-mutating calls of the task that looked at the workspace (``TaskSession``)."""


@dataclass(frozen=True)
class AnswerDelivered:
    """The task ends as an answer (the gate measures "no file changes")."""

    how: Literal["no-change", "investigated"]


@dataclass(frozen=True)
class ChangeDeclined:
    """A task that demands a change, and the model chose "no change needed": honest pause."""

    reason: str


@dataclass(frozen=True)
class KeepGuarding:
    """The guard decides; a first round offers the typed choice when ``offer_no_change``."""

    offer_no_change: bool


ReplyDecision = AnswerDelivered | ChangeDeclined | KeepGuarding


def read_reply(obs: ReplyObservation) -> ReplyDecision:
    """Answer, declined change, or the guard (see the module)."""
    no_change = obs.final and obs.finish is not None and obs.finish.status == "no_change"
    match obs.demand:
        case ChangeDemand.DEMANDED:
            if no_change and obs.finish is not None:
                said = obs.finish.summary.strip() or obs.finish.detail.strip()
                return ChangeDeclined(said or NO_REASON_GIVEN)
            return KeepGuarding(offer_no_change=False)
        case ChangeDemand.UNCLEAR:
            if no_change:
                return AnswerDelivered("no-change")
            if obs.final and obs.investigations > 0 and reads_as_answer(obs.reply_text):
                return AnswerDelivered("investigated")
            return KeepGuarding(offer_no_change=True)
        case _ as unreachable:
            assert_never(unreachable)


def reply_observation(state: RouterState, facts: TurnFacts) -> ReplyObservation:
    """What :func:`read_reply` reads of a turn end."""
    return ReplyObservation(
        demand=state.demand, final=facts.verdict is TurnVerdict.TEXT_STOP,
        reply_text=facts.reply_text, finish=facts.finish, investigations=facts.investigations,
    )
