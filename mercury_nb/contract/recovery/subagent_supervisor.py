"""The sub-agent supervisor as a pure state machine: resume a budget pause, else report.

A sub-agent's run ends with a typed :class:`~mercury_nb.contract.endings.Ending`. Feed it to
:func:`step_supervisor`:

* a pause that more budget can cure (the step budget ran out, or replies kept hitting the
  output-token limit) is resumed automatically, on the SAME session with a fresh budget, up
  to ``config.subagent_max_resumes`` times;
* every other ending goes to the parent at once, and a budget pause goes there once the
  resumes are used up. A report is ``completed`` only for the two completion endings, which
  cannot exist without their evidence: budget exhaustion can never report a completion.

Pauses the loop already escalated (the narration guard, the verification gate, a doom loop
on every provider) are not resumed blindly: the parent sees why and decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    Aborted,
    BlockedPause,
    BudgetPause,
    DeclinedPause,
    Ending,
    EndingStatus,
    Failed,
    FilesMissingPause,
    NoChangesCompletion,
    NoToolSupport,
    Paused,
    ProviderFailure,
    QuestionPause,
    StepBudgetPause,
    TruncationPause,
    VerificationFailedPause,
    VerifiedCompletion,
    WindowTooSmall,
    WorkNotStartedPause,
    status_of,
)
from mercury_nb.contract.failure_banners import window_reason
from mercury_nb.contract.gate.completion_gate import not_created_line
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.recovery.bounded import Retry, bounded
from mercury_nb.contract.spend import budget_text

SUBAGENT_RESUME_NUDGE = (
    "[SYSTEM: RESUMED] This task paused — {why} — and the supervisor gave you a fresh step "
    "budget. The task is NOT done: pick up exactly where you left off; do not start over "
    "and do not summarize."
)
"""First line of the message appended to the sub-agent's own session when it is resumed."""

SUBAGENT_RESUME_NOTICE = "paused because {why} — resuming automatically ({number} of {limit})…"
"""The progress line the parent's user sees for an automatic resume."""


@dataclass(frozen=True)
class SupervisorState:
    """Automatic resumes granted so far to one sub-agent."""

    resumes: int = 0


@dataclass(frozen=True)
class SubOutcome:
    """How one run of the sub-agent ended, and the task it was given."""

    task: str
    ending: Ending


@dataclass(frozen=True)
class ResumeSub:
    """Restore the sub-agent's session from its checkpoint, append ``nudge``, show
    ``notice``, and run it again with a fresh step budget."""

    number: int
    """Which automatic resume this is, from 1."""
    nudge: str
    notice: str


@dataclass(frozen=True)
class ReportToParent:
    """Stop supervising: the parent's tool result says ``status`` and, unless completed, why."""

    ending: Ending
    resumes: int
    why: str | None
    """Why the sub-agent is not done (None only for a completion)."""

    @property
    def status(self) -> EndingStatus:
        return status_of(self.ending)


SupervisorDecision = ResumeSub | ReportToParent


@dataclass(frozen=True)
class SubagentRun:
    """A supervised sub-agent's end: its outcome (changes measured from its own start) and
    the supervisor's report (status, why, automatic resumes used)."""

    sub_id: str
    outcome: TaskOutcome
    report: ReportToParent


def is_budget_pause(ending: Ending) -> bool:
    """A pause that a fresh budget on the same session can cure."""
    return isinstance(ending, StepBudgetPause | TruncationPause)


def why_not_done(ending: Ending) -> str | None:
    """Why the sub-agent stopped short, as a clause (None for a completion)."""
    match ending:
        case VerifiedCompletion() | NoChangesCompletion():
            return None
        case StepBudgetPause():
            return "its step budget ran out"
        case TruncationPause():
            return "its replies kept hitting the output-token limit"
        case VerificationFailedPause(last_check=None):
            return "its changes are in, but no check ran after them"
        case VerificationFailedPause():
            return "its changes are in, but the last check didn't pass"
        case WorkNotStartedPause():
            return "it never landed a change — only a description of the work"
        case FilesMissingPause(missing=missing):
            return not_created_line(missing)
        case Paused(reason=reason):
            return reason.strip().rstrip(".…")
        case BudgetPause(hit=hit):
            return f"the task's {budget_text(hit)}"
        case BlockedPause(reason=reason):
            return f"it was blocked: {' '.join(reason.split()).rstrip('.…')}"
        case DeclinedPause(reason=reason):
            return f"it declined to change anything: {' '.join(reason.split()).rstrip('.…')}"
        case QuestionPause(question=question):
            return f"it asks: {' '.join(question.split())}"
        case ProviderFailure(last_error=error):
            return f"every model failed (last error: {error})"
        case Failed(reason=reason):
            return reason.strip().rstrip(".…")
        case WindowTooSmall():
            return window_reason(ending)
        case NoToolSupport(model=model):
            return f"its model {model} does not take tools"
        case Aborted():
            return "it was stopped"
        case _ as unreachable:
            assert_never(unreachable)


def resume_nudge(task: str, why: str, config: MercuryConfig) -> str:
    """The resume message, with the task restated like a fresh step budget's nudge."""
    excerpt = task.strip()[: config.task_restate_chars]
    return f'{SUBAGENT_RESUME_NUDGE.format(why=why)}\nThe task remains: "{excerpt}"'


def step_supervisor(
    state: SupervisorState, outcome: SubOutcome, config: MercuryConfig
) -> tuple[SupervisorState, SupervisorDecision]:
    """Resume a budget pause while resumes are left; report everything else to the parent."""
    ending = outcome.ending
    why = why_not_done(ending)
    resume = bounded(state.resumes, config.subagent_max_resumes)
    if why is not None and is_budget_pause(ending) and isinstance(resume, Retry):
        notice = SUBAGENT_RESUME_NOTICE.format(why=why, number=resume.attempt, limit=resume.of)
        decision = ResumeSub(resume.attempt, resume_nudge(outcome.task, why, config), notice)
        return SupervisorState(resumes=resume.attempt), decision
    return state, ReportToParent(ending, state.resumes, why)
