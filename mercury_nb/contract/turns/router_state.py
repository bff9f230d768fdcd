"""The turn router's vocabulary: the facts of a turn, the router's state, and its decisions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import Blocker, Ending, WindowTooSmall
from mercury_nb.contract.escalation import provider_policy as pp
from mercury_nb.contract.escalation.doom_loop import DoomLoop
from mercury_nb.contract.escalation.narration_guard import GuardState, RunGuardRound
from mercury_nb.contract.escalation.tool_support import ToolSupportState
from mercury_nb.contract.gate.change_demand import ChangeDemand, change_demand
from mercury_nb.contract.gate.completion_gate import GateState
from mercury_nb.contract.gate.run_evidence import RunAnswer
from mercury_nb.contract.gate.task_intent import TaskIntent, classify_intent
from mercury_nb.contract.gate.task_reading import read_task
from mercury_nb.contract.gate.task_requirements import NOTHING_ASKED, TaskRequirements
from mercury_nb.contract.gate.verification import EvidenceVerdict, NoCheck
from mercury_nb.contract.recovery.continuation import StepBudgetState, TruncationState
from mercury_nb.contract.redaction import Masked
from mercury_nb.contract.spend import BudgetHit
from mercury_nb.contract.turns.final_reply import FinishCall
from mercury_nb.contract.turns.turn_verdict import TurnVerdict
from mercury_nb.contract.vocabulary import DecisionKind, NoticeKind, ToolChoice

Message = dict[str, Any]

STALL_KIND = "stalled"
"""``ProviderTrouble.kind`` of an attempt cut by the stall watchdog: a transient failure,
retried or fallen back from like any interrupted attempt, the stall report as its message."""


@dataclass(frozen=True)
class TurnDirective:
    """How the next turn starts: messages to append, and the first step's tool choice."""

    messages: tuple[Message, ...] = ()
    tool_choice: ToolChoice = "auto"
    tool_names: tuple[str, ...] | None = None
    provider_index: int = 0
    must_mutate: bool = False
    """A guard round's forced step: a reply whose tool calls are none of them mutating ends
    the turn once they ran (a failed round), instead of stepping on with ``auto``."""


@dataclass(frozen=True)
class ProviderTrouble:
    """A request failed: before any output (``streamed_output`` False) or mid-stream.

    ``tool_choice`` and ``tool_names`` are those of the request that failed, so a retry
    before any output re-sends the same first step (a forced guard step stays forced)."""

    provider: str
    message: Masked
    """Masked where it entered the task (:func:`~mercury_nb.contract.redaction.mask_once`)."""
    status: int | None = None
    kind: str = "error"
    retry_after_s: float | None = None
    streamed_output: bool = False
    tool_choice: ToolChoice = "auto"
    tool_names: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Unreadable:
    """A changed file the read-back refused: its path and why (``a FIFO (named pipe), not a
    regular file``, ``2,147,483,648 bytes, over the 16,000,000-byte read limit``...)."""

    path: str
    why: str


@dataclass(frozen=True)
class Measured:
    """The change summary measured on disk when the turn ended."""

    changed_paths: tuple[str, ...]
    verified_by: Literal["git", "snapshot"]
    complete: bool = True
    missing_files: tuple[str, ...] = ()
    """The files the task asks to create or write that are not on disk (measured)."""
    deleted_paths: tuple[str, ...] = ()
    """The changed paths that were deleted."""
    unreadable: tuple[Unreadable, ...] = ()
    """Changed files that did not read back (then ``complete`` is False)."""


@dataclass(frozen=True)
class TurnFacts:
    """Everything the router needs about the turn that just ended. No I/O inside."""

    verdict: TurnVerdict
    reply_text: str = ""
    finish: FinishCall | None = None
    """The model's ``finish`` call that ended the turn (``reply_text`` is then its answer)."""
    cut_write: bool = False
    cut_write_path: str | None = None
    trouble: ProviderTrouble | None = None
    measured: Measured | None = None
    evidence: EvidenceVerdict = field(default_factory=NoCheck)
    run: RunAnswer | None = None
    """What the task's commands show of the run it asks for (``run_answer``; None: it asks
    to run nothing). Measured with ``evidence``, on a ``text-stop``."""
    jitter: float = 0.0
    mutations_in_task: int = 0
    """Successful mutating tool calls in the whole task so far (from the session's tool log)."""
    last_failed_mutation: Blocker | None = None
    """The task's latest failed mutating tool call, with the result the model saw."""
    doom: DoomLoop | None = None
    """The doom-loop detector stopped this attempt (``trouble`` then names the provider)."""
    pressure_pause: str | None = None
    """The memory governor's pause words (``PauseForPressure.why``): memory or context
    pressure outlasted compaction, so the task pauses honestly before the next request."""
    window_too_small: WindowTooSmall | None = None
    budget_hit: BudgetHit | None = None
    """A spending budget was reached before the next request: the task pauses, none sent."""
    permission_pause: str | None = None
    """An action nobody could allow was denied: the task pauses with these words."""
    """The window cannot hold what every request carries: the task fails, no request sent."""
    reply_cap: int | None = None
    """``max_tokens`` of the turn's last request (a cut prose reply is asked for less)."""
    tools_reported: bool | None = None
    """Whether the serving model's server reports tool support (``/props``; None: unsaid)."""
    forced: bool = False
    """The turn's first step was sent with ``tool_choice`` ``required``."""
    called_tools: bool = False
    """The model answered with at least one tool call during the turn."""
    investigations: int = 0
    """Non-mutating calls of the whole task that looked at the workspace and ran (reads,
    listings, read-only commands): an answer after one may end a task that demands no change."""
    user_denied: bool = False
    """The user denied an action in this run (and has not allowed it since): the guard does
    not force a task past the user's "no"."""


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
    guard: GuardState = field(default_factory=GuardState)
    guard_round: RunGuardRound | None = None
    """The narration-guard round in flight (kept to degrade it if its forced step is refused)."""
    tools: ToolSupportState = field(default_factory=ToolSupportState)
    """What each provider showed of its tool support (not checkpointed: learned again)."""
    demand: ChangeDemand = ChangeDemand.DEMANDED
    """How plainly a work task asks for a change (``change_demand``): the guard's first read."""
    requirements: TaskRequirements = NOTHING_ASKED
    """What the task's words ask for (``read_task``), read once when the task starts."""

    def output_cap(self, index: int, default: int) -> int:
        return dict(self.output_caps).get(index, default)

    @classmethod
    def start(cls, task: str, config: MercuryConfig) -> RouterState:
        requirements = read_task(task, config.mode)  # once per task: every prose stop reuses it
        return cls(
            task=task,
            intent=classify_intent(task, config.mode, requirements),
            demand=change_demand(task, config.mode, requirements),
            requirements=requirements,
            gate=GateState(),
            budget=StepBudgetState(),
            truncation=TruncationState(),
            providers=pp.ProviderState(chain=config.model_chain),
        )


@dataclass(frozen=True)
class FinishWith:
    ending: Ending
    kind: ClassVar[DecisionKind] = "finish"


@dataclass(frozen=True)
class NextTurn:
    directive: TurnDirective
    notice: str | None = None
    fresh_budget: bool = False
    notice_kind: NoticeKind = "continuation"
    kind: ClassVar[DecisionKind] = "next-turn"


@dataclass(frozen=True)
class RetryStep:
    """Ask again (same or next provider) after ``delay_s``; ``directive.messages`` may
    carry a continue-from-partial note or a loop directive."""

    directive: TurnDirective
    notice: str | None = None
    delay_s: float = 0.0
    output_cap: int | None = None
    """A lowered ``max_tokens`` for the provider being retried, if the error asked for it."""
    notice_kind: NoticeKind = "provider-switch"
    kind: ClassVar[DecisionKind] = "retry-step"


@dataclass(frozen=True)
class GuardRound:
    """Run narration-guard round ``round.round``: show ``notice``; when ``grounding`` is set,
    append the agent-made workspace listing; then append ``directive.messages`` and send the
    first step with ``directive.tool_choice`` and ``directive.tool_names`` (None: every tool,
    the same tools array as every other step, so the prompt's prefix stays cached)."""

    round: RunGuardRound
    directive: TurnDirective
    grounding: bool
    notice: str | None
    fresh_budget: bool = False
    notice_kind: NoticeKind = "guard-round"
    kind: ClassVar[DecisionKind] = "guard-round"


RouterDecision = FinishWith | NextTurn | RetryStep | GuardRound


def user(text: str) -> Message:
    return {"role": "user", "content": text}
