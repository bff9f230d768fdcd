"""Turns an Ending and the measured change report into the public TaskOutcome."""

from __future__ import annotations

import os

from mercury_nb.agent.session import TaskSession
from mercury_nb.contract.banners import (
    banner_text,
    blocked_line,
    blocker_line,
    last_check_line,
    no_tools_line,
    window_reason,
)
from mercury_nb.contract.endings import (
    BlockedPause,
    Ending,
    Failed,
    NoChangesCompletion,
    NoToolSupport,
    Paused,
    ProviderFailure,
    QuestionPause,
    VerificationFailedPause,
    WindowTooSmall,
    WorkNotStartedPause,
    resumable,
    status_of,
)
from mercury_nb.contract.outcome import CommandEvidence, TaskOutcome, Usage
from mercury_nb.contract.redaction import displayable, known_secrets, redact
from mercury_nb.workspace.changes import ChangeReport


def blocker_of(ending: Ending, blocker_chars: int) -> str | None:
    """The one line naming what blocked a paused or failed task, if any."""
    match ending:
        case WorkNotStartedPause(blocker=blocker):
            return blocker_line(blocker, blocker_chars)
        case VerificationFailedPause(last_check=check, stale=stale):
            return last_check_line(check, stale)
        case Paused(reason=reason, blocker=blocker):
            return blocker_line(blocker, blocker_chars) if blocker else reason
        case BlockedPause(reason=reason):
            return blocked_line(reason, blocker_chars)
        case QuestionPause(question=question):
            return " ".join(question.split())
        case ProviderFailure(last_error=error):
            return error
        case Failed(reason=reason):
            return reason
        case WindowTooSmall():
            return window_reason(ending)
        case NoToolSupport():
            return no_tools_line(ending)
        case _:
            return None


def command_evidence(session: TaskSession) -> list[CommandEvidence]:
    last = session.last_mutation_seq
    return [
        CommandEvidence(
            command=e.command, exit_code=e.exit_code, step=e.step, timed_out=e.timed_out,
            after_last_change=last is None or e.seq > last,
        )
        for e in session.tool_log
        if e.command is not None
    ]


def build_outcome(session: TaskSession, ending: Ending, report: ChangeReport) -> TaskOutcome:
    config = session.config
    secrets = known_secrets(config, os.environ)

    def clean(text: str) -> str:
        return redact(displayable(text), secrets)

    changes = [
        c.model_copy(update={"path": clean(c.path), "preview": clean(c.preview),
                             "diff": clean(c.diff)})
        for c in report.changes
    ]
    status = status_of(ending)
    banner = banner_text(ending, changes, blocker_chars=config.blocker_chars,
                         provider_reason_chars=config.provider_error_chars)
    blocker = blocker_of(ending, config.blocker_chars)
    return TaskOutcome(
        task_id=session.task_id,
        status=status,
        resumable=resumable(ending),
        verdict=session.last_verdict,
        answer=clean(session.answer)
        if status == "completed" and session.answer is not None else None,
        task=clean(session.task),
        banner=clean(banner),
        blocker=clean(blocker) if blocker else None,
        changes=changes,
        evidence=command_evidence(session),
        steps=session.steps_total,
        models=list(session.models_used),
        unread=[clean(name) for name in ending.unread]
        if isinstance(ending, NoChangesCompletion) else [],
        usage={
            name: Usage(prompt_tokens=prompt, completion_tokens=completion,
                        total_tokens=prompt + completion)
            for name, (prompt, completion) in session.usage.items()
        },
    )
