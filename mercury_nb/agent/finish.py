"""Turns an Ending and the measured change report into the public TaskOutcome."""

from __future__ import annotations

import os

from mercury_nb.agent.session import TaskSession
from mercury_nb.contract.banners import (
    DECLINED_BLOCKER,
    banner_text,
    check_clause,
    ending_clause,
    last_check_line,
)
from mercury_nb.contract.endings import (
    BlockedPause,
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
    VerificationFailedPause,
    VerifiedCompletion,
    WindowTooSmall,
    WorkNotStartedPause,
    resumable,
    status_of,
)
from mercury_nb.contract.failure_banners import no_tools_blocker, window_reason
from mercury_nb.contract.gate.completion_gate import not_created_line
from mercury_nb.contract.gate.verification import ReadBack, Verified
from mercury_nb.contract.notebook_changes import NotebookDiff
from mercury_nb.contract.outcome import CommandEvidence, TaskOutcome, Usage
from mercury_nb.contract.recovery.continuing import RunSettings, cause_of
from mercury_nb.contract.redaction import displayable, known_secrets, redact, redact_data
from mercury_nb.contract.spend import Spend, budget_text
from mercury_nb.contract.untrusted import clean_data
from mercury_nb.workspace.changes import ChangeReport

NO_CHECK_PASSED = "the last check did not pass: {check}"


def blocker_of(ending: Ending, blocker_chars: int, clause: str | None = None) -> str | None:
    """The one clause naming what blocked a paused or failed task, if any: the banner's
    "What blocked it:" line without its label (a resume turn says it in its own words).
    ``clause``: the ending's :func:`~mercury_nb.contract.banners.ending_clause`, when built."""
    clause = ending_clause(ending, blocker_chars) if clause is None else clause
    match ending:
        case WorkNotStartedPause():
            return clause
        case VerificationFailedPause(last_check=check, stale=stale, requested=run):
            return NO_CHECK_PASSED.format(check=check_clause(check, stale)) if check else \
                last_check_line(check, stale, run)
        case FilesMissingPause(missing=missing):
            return not_created_line(missing)
        case Paused(reason=reason, blocker=blocker):
            return clause if blocker else reason
        case BudgetPause(hit=hit):
            return budget_text(hit)
        case BlockedPause():
            return clause
        case DeclinedPause():
            return DECLINED_BLOCKER.format(reason=clause)
        case QuestionPause(question=question):
            return " ".join(question.split())
        case ProviderFailure(last_error=error):
            return error
        case Failed(reason=reason):
            return reason
        case WindowTooSmall():
            return window_reason(ending)
        case NoToolSupport():
            return no_tools_blocker(ending)
        case _:
            return None


READ_BACK_COMMAND = "read back {path}"


def command_evidence(session: TaskSession, ending: Ending | None = None) -> list[CommandEvidence]:
    """Every command and notebook run of the task, in order, then, when ``ending`` is a
    read-back completion, one ``read-back`` entry per file read back: each ``✓ Verified``
    line of the banner has its entry. The check a completion names is after the last
    change even when it is that change (a run the task asked for)."""
    last = session.last_mutation_seq
    verified_seq = None
    read_back: tuple[str, ...] = ()
    match ending:
        case VerifiedCompletion(evidence=Verified(check=check)):
            verified_seq = check.seq
        case VerifiedCompletion(evidence=ReadBack(paths=paths)):
            read_back = paths
        case _:
            pass
    entries = [
        CommandEvidence(
            command=e.command, exit_code=e.exit_code, step=e.step, timed_out=e.timed_out,
            after_last_change=last is None or e.seq > last or e.seq == verified_seq,
            kind="notebook" if e.notebook_ran else "command",
        )
        for e in session.tool_log
        if e.command is not None
    ]
    read = {entry.path: entry for entry in session.read_backs}
    for path in read_back:
        found = read.get(path)
        entries.append(CommandEvidence(
            command=READ_BACK_COMMAND.format(path=path), kind="read-back", path=path,
            exit_code=0 if found is not None and found.ok else 1,
            step=found.step if found is not None else session.steps_total,
        ))
    return entries


def _cleaned_notebook(diff: NotebookDiff | None, secrets: tuple[str, ...]) -> NotebookDiff | None:
    """A notebook's cell diff with every text valid UTF-8 and the known secrets masked."""
    if diff is None:
        return None
    return NotebookDiff.model_validate(redact_data(clean_data(diff.model_dump()), secrets))


def build_outcome(session: TaskSession, ending: Ending, report: ChangeReport,
                  spend: Spend | None = None) -> TaskOutcome:
    """The outcome of ``ending``; ``spend`` is the session's usage priced (None: not priced,
    so no cost is said)."""
    config = session.config
    secrets = known_secrets(config, os.environ)

    def clean(text: str) -> str:
        return redact(displayable(text), secrets)

    changes = [
        c.model_copy(update={"path": clean(c.path), "preview": clean(c.preview),
                             "diff": clean(c.diff),
                             "notebook": _cleaned_notebook(c.notebook, secrets)})
        for c in report.changes
    ]
    status = status_of(ending)
    clause = ending_clause(ending, config.blocker_chars)  # once: the banner's and the blocker's
    banner = banner_text(ending, changes, blocker_chars=config.blocker_chars,
                         provider_reason_chars=config.provider_error_chars,
                         kernel_runs=sum(1 for e in session.tool_log if e.ran_in_kernel),
                         clause=clause)
    blocker = blocker_of(ending, config.blocker_chars, clause)
    # a provider failure's texts came masked (where each error entered): shown as they are
    masked = isinstance(ending, ProviderFailure)
    return TaskOutcome(
        task_id=session.task_id,
        status=status,
        resumable=resumable(ending),
        cause=cause_of(ending, RunSettings.of(config)),
        verdict=session.last_verdict,
        answer=clean(session.answer)
        if status == "completed" and session.answer is not None else None,
        task=session.shown_task if session.shown_task is not None else clean(session.task),
        banner=banner if masked else clean(banner),
        blocker=(blocker if masked else clean(blocker)) if blocker else None,
        changes=changes,
        evidence=command_evidence(session, ending),
        steps=session.steps_total,
        models=list(session.models_used),
        unread=[clean(name) for name in ending.unread]
        if isinstance(ending, NoChangesCompletion) else [],
        usage={
            name: Usage(prompt_tokens=prompt, completion_tokens=completion,
                        total_tokens=prompt + completion)
            for name, (prompt, completion) in session.usage.items()
        },
        cost_usd=spend.usd if spend is not None else None,
        unpriced=list(spend.unpriced) if spend is not None else [],
    ).redacted_with(secrets)  # the ledger trusts it: its texts are redacted once
