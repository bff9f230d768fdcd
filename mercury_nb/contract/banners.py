"""Every user-facing ending banner as plain text, derived from the ending's type alone.

The widget layer renders HTML from the same ending; notices live beside their policies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from mercury_nb.contract.answer_grounding import unread_notice
from mercury_nb.contract.change_lines import change_line
from mercury_nb.contract.endings import (
    Aborted,
    BlockedPause,
    Blocker,
    BudgetPause,
    DeclinedPause,
    Ending,
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
)
from mercury_nb.contract.failure_banners import (
    ALSO_SMALL_WINDOW,
    FAILED,
    NO_TOOL_SUPPORT,
    NO_TOOLS_FIX,
    no_tools_line,
    window_lines,
    window_reason,
)
from mercury_nb.contract.gate.completion_gate import not_created_line
from mercury_nb.contract.gate.run_evidence import (
    NO_REQUESTED_RUN,
    REQUESTED_RUN_MISSING,
    REQUESTED_RUN_PAUSE,
    REQUESTED_RUN_STALE,
)
from mercury_nb.contract.gate.verification import CheckRecord, ReadBack, Verified
from mercury_nb.contract.outcome import FileChange
from mercury_nb.contract.spend import budget_text, raise_hint
from mercury_nb.contract.text_cut import clip
from mercury_nb.contract.untrusted import one_line, shown_names

TASK_COMPLETE = "✓ Task complete"
RESUME_HINT = 'Send "continue" and I\'ll pick up right where I left off.'
STEP_BUDGET_PAUSE = f"I've paused for now — this one needs another pass. {RESUME_HINT}"
TRUNCATION_PAUSE = (
    f"I've paused for now — my replies kept hitting the output-token limit. {RESUME_HINT}"
)
WORK_NOT_STARTED = "I couldn't get started on this one yet — send \"continue\" and I'll try again."
NO_BLOCKER = "What blocked it: no change was attempted — only a description of the work."
VERIFICATION_FAILED = (
    "The changes are in, but the last check didn't pass — I'm not calling this done."
)
NO_CHECK_RAN = "Last check: none — no build or test ran after the changes."
NO_CHANGES = "Response delivered · no file changes ({how}-verified)"
ABORTED = {
    "stop": "Stopped at your request — nothing was rolled back.",
    "interrupt": "Stopped by an interrupt — nothing was rolled back.",
}
NOTHING_WRITTEN = "Nothing had been written yet."
WRITTEN_BEFORE_STOP = "Written before the stop:"
CHANGES_SO_FAR = "Changes so far:"
ALL_PROVIDERS_FAILED = "All LLM providers failed. Last error: {error}"
PER_PROVIDER = "Per-provider:"
BLOCKED = "I've paused — I couldn't finish this one."
BLOCKED_BY = "What blocked it: {reason}"
DENIED_TOO = "Also: {denied}."
"""A verification pause's line for what the user denied earlier in the run."""
BLOCKED_HINT = 'Once that is sorted out, send "continue" and I\'ll try again.'
DECLINED = "I've paused — this task asks for a change, but the model declined to make any."
DECLINED_BY = "What it said: no change is needed — {reason}"
DECLINED_BLOCKER = "the model declined to change anything: {reason}"
"""The blocker of a :class:`DeclinedPause` (``--json``, the ledger, a resume turn)."""
DECLINED_HINT = (
    'If the change is still wanted, send "continue, <what to change>" and I\'ll go on from '
    "there."
)
QUESTION = "I need your answer before I go on: {question}"
QUESTION_HINT = (
    'Answer with "continue, <your answer>" and I\'ll go on from there (a bare "continue" goes '
    "on without one)."
)
_READ_BACK_LISTED = 5
KERNEL_RAN = "ran code in your kernel"
"""The change summary's line for run_in_kernel: what it changed lives in the kernel, not in
files, and is not rolled back."""


def change_summary_lines(changes: Sequence[FileChange]) -> list[str]:
    """One line per changed file, in the order given."""
    return [change_line(change) for change in changes]


NOTEBOOK_VERIFIED = "✓ Verified: {path} ran top to bottom in a fresh kernel"
"""The evidence line of a notebook whose every cell ran without error after the last change."""
KERNEL_VERIFIED = "✓ Verified: {cells} ran in your kernel (not re-run from a fresh kernel)"


def evidence_line(evidence: Verified | ReadBack) -> str:
    """``✓ Verified: <cmd> ✓``, a notebook's fresh run, its cells' run in the user's kernel, or
    the read-back of non-code files."""
    match evidence:
        case Verified(check=check) if check.kind == "notebook" and check.path:
            return NOTEBOOK_VERIFIED.format(path=one_line(check.path))
        case Verified(check=check) if check.kind == "kernel":
            return KERNEL_VERIFIED.format(cells=one_line(check.command))
        case Verified(check=check):
            return f"✓ Verified: {one_line(check.command)} ✓"
        case ReadBack(paths=paths):
            listed = ", ".join(shown_names(paths[:_READ_BACK_LISTED]))
            if len(paths) > _READ_BACK_LISTED:
                listed += f" and {len(paths) - _READ_BACK_LISTED} more"
            return f"✓ Verified: change summary and read-back of {listed} ✓"
        case _ as unreachable:
            assert_never(unreachable)


def last_check_line(last_check: CheckRecord | None, stale: bool, requested: str = "") -> str:
    """``Last check: <cmd> ✗ (exit N)``, ``... (ran before the latest changes)``, or none
    (``Last run: none — <requested> never ran.`` for a run the task asked for)."""
    if last_check is None:
        return NO_REQUESTED_RUN.format(run=requested) if requested else NO_CHECK_RAN
    return "Last check: " + check_clause(last_check, stale)


def check_clause(check: CheckRecord, stale: bool) -> str:
    """:func:`last_check_line` of a check that ran, without its label."""
    command = one_line(check.command)
    if stale:
        return f"{command} (ran before the latest changes)"
    if check.failure:  # a notebook run: its failing cell and the error's last line
        return f"{command} ✗ ({one_line(check.failure)})"
    if check.timed_out or check.exit_code is None:
        return f"{command} ✗ ({'timed out' if check.timed_out else 'no exit code'})"
    return f"{command} ✗ (exit {check.exit_code})"


def blocker_line(blocker: Blocker | None, blocker_chars: int = 120) -> str:
    """``What blocked it: <tool>: <first N chars of the result, on one line>``."""
    return BLOCKED_BY.format(reason=blocker_clause(blocker, blocker_chars))


def blocker_clause(blocker: Blocker | None, blocker_chars: int = 120) -> str:
    """:func:`blocker_line` without its label."""
    if blocker is None:
        return NO_BLOCKER.removeprefix(BLOCKED_BY.format(reason=""))
    return one_line(blocker.tool) + ": " + blocked_clause(blocker.result, blocker_chars)


def blocked_clause(reason: str, blocker_chars: int = 120) -> str:
    """A reason's first N chars, on one line (:func:`blocked_line` without its label)."""
    return one_line(clip(" ".join(reason.split()), blocker_chars, mark=""))


def ending_clause(ending: Ending, blocker_chars: int = 120) -> str | None:
    """The clause naming what blocked ``ending`` (its banner's "What blocked it:" or "What it
    said:" line without its label), built once for the banner and the outcome's blocker."""
    match ending:
        case WorkNotStartedPause(blocker=blocker) | Paused(blocker=Blocker() as blocker):
            return blocker_clause(blocker, blocker_chars)
        case BlockedPause(reason=reason) | DeclinedPause(reason=reason):
            return blocked_clause(reason, blocker_chars)
    return None


def _sentence(reason: str) -> str:
    return one_line(reason.strip().rstrip(".…"))


def _with_changes(lines: list[str], changes: Sequence[FileChange], label: str) -> str:
    if changes:
        lines = [*lines, label, *change_summary_lines(changes)]
    return "\n".join(lines)


def kernel_runs_line(runs: int) -> str:
    """``Also: ran code in your kernel (2 runs)``."""
    return f"Also: {KERNEL_RAN} ({runs} run{'' if runs == 1 else 's'})"


def banner_text(
    ending: Ending,
    changes: Sequence[FileChange],
    *,
    blocker_chars: int = 120,
    provider_reason_chars: int = 140,
    max_providers: int = 8,
    kernel_runs: int = 0,
    clause: str | None = None,
) -> str:
    """The plain-text banner for ``ending``; ``changes`` is the measured change list;
    ``kernel_runs`` the run_in_kernel calls that ran code (a line after the changes);
    ``clause``: its :func:`ending_clause` when the caller built it already."""
    clause = ending_clause(ending, blocker_chars) if clause is None else clause
    text = _ending_banner(ending, changes, clause, provider_reason_chars, max_providers)
    return f"{text}\n{kernel_runs_line(kernel_runs)}" if kernel_runs else text


def _ending_banner(ending: Ending, changes: Sequence[FileChange], clause: str | None,
                   provider_reason_chars: int, max_providers: int) -> str:
    match ending:
        case VerifiedCompletion(evidence=evidence):
            lines = [TASK_COMPLETE, *change_summary_lines(changes), evidence_line(evidence)]
            return "\n".join(lines)
        case NoChangesCompletion(verified_by=how, unread=unread):
            if changes:
                raise ValueError("a no-changes ending was given a non-empty change list")
            lines = [NO_CHANGES.format(how=how)]
            if unread:
                lines.append(unread_notice(shown_names(unread)))
            return "\n".join(lines)
        case StepBudgetPause():
            return _with_changes([STEP_BUDGET_PAUSE], changes, CHANGES_SO_FAR)
        case WorkNotStartedPause():
            lines = [WORK_NOT_STARTED, BLOCKED_BY.format(reason=clause)]
            return _with_changes(lines, changes, CHANGES_SO_FAR)
        case VerificationFailedPause(last_check=last_check, stale=stale, requested=run,
                                     denied=denied):
            head = VERIFICATION_FAILED if not run else (
                REQUESTED_RUN_MISSING if last_check is None
                else REQUESTED_RUN_STALE if stale else REQUESTED_RUN_PAUSE).format(run=run)
            lines = [head, last_check_line(last_check, stale, run)]
            if denied:
                lines.append(DENIED_TOO.format(denied=denied))
            return _with_changes(lines, changes, CHANGES_SO_FAR)
        case FilesMissingPause(missing=missing):
            missed = not_created_line(tuple(shown_names(missing)))
            lines = [f"I've paused for now — {missed}. {RESUME_HINT}"]
            return _with_changes(lines, changes, CHANGES_SO_FAR)
        case TruncationPause():
            return _with_changes([TRUNCATION_PAUSE], changes, CHANGES_SO_FAR)
        case Paused(reason=reason):
            lines = [f"I've paused for now — {_sentence(reason)}. {RESUME_HINT}"]
            if clause is not None:
                lines.append(BLOCKED_BY.format(reason=clause))
            return _with_changes(lines, changes, CHANGES_SO_FAR)
        case BudgetPause(hit=hit):
            lines = [f"I've paused — {budget_text(hit)}.", raise_hint(hit)]
            return _with_changes(lines, changes, CHANGES_SO_FAR)
        case BlockedPause():
            lines = [BLOCKED, BLOCKED_BY.format(reason=clause), BLOCKED_HINT]
            return _with_changes(lines, changes, CHANGES_SO_FAR)
        case DeclinedPause():
            lines = [DECLINED, DECLINED_BY.format(reason=clause), DECLINED_HINT]
            return _with_changes(lines, changes, CHANGES_SO_FAR)
        case QuestionPause(question=question):
            lines = [QUESTION.format(question=one_line(" ".join(question.split()))),
                     QUESTION_HINT]
            return _with_changes(lines, changes, CHANGES_SO_FAR)
        case ProviderFailure(last_error=error, providers=providers):
            lines = [ALL_PROVIDERS_FAILED.format(error=one_line(error))]
            if providers:
                lines.append(PER_PROVIDER)
                lines.extend(
                    f"- {one_line(p.name)}: {blocked_clause(p.reason, provider_reason_chars)}"
                    for p in providers[:max_providers]
                )
            return _with_changes(lines, changes, CHANGES_SO_FAR)
        case Failed(reason=reason):
            return _with_changes([FAILED.format(reason=_sentence(reason))], changes, CHANGES_SO_FAR)
        case WindowTooSmall():
            return _with_changes(window_lines(ending), changes, CHANGES_SO_FAR)
        case NoToolSupport(model=model, window=window):
            lines = [NO_TOOL_SUPPORT.format(model=one_line(model)), no_tools_line(ending),
                     NO_TOOLS_FIX]
            if window is not None:
                lines.append(ALSO_SMALL_WINDOW.format(reason=window_reason(window),
                                                      window=window.larger_window))
            return _with_changes(lines, changes, CHANGES_SO_FAR)
        case Aborted(by=by):
            if not changes:
                return "\n".join([ABORTED[by], NOTHING_WRITTEN])
            return _with_changes([ABORTED[by]], changes, WRITTEN_BEFORE_STOP)
        case _ as unreachable:
            assert_never(unreachable)
