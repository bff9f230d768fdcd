"""Turns an Ending and the measured change report into the public TaskOutcome."""

from __future__ import annotations

from mercury_nb.agent.session import TaskSession
from mercury_nb.contract.banners import banner_text, blocker_line, last_check_line
from mercury_nb.contract.endings import (
    Ending,
    Failed,
    Paused,
    ProviderFailure,
    VerificationFailedPause,
    WorkNotStartedPause,
    status_of,
)
from mercury_nb.contract.outcome import CommandEvidence, TaskOutcome, Usage
from mercury_nb.contract.redaction import config_secrets, redact
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
        case ProviderFailure(last_error=error):
            return error
        case Failed(reason=reason):
            return reason
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
    secrets = config_secrets(config)
    status = status_of(ending)
    banner = banner_text(ending, report.changes, blocker_chars=config.blocker_chars,
                         provider_reason_chars=config.provider_error_chars)
    blocker = blocker_of(ending, config.blocker_chars)
    return TaskOutcome(
        task_id=session.task_id,
        task=session.task,
        status=status,
        verdict=session.last_verdict,
        answer=session.answer if status == "completed" else None,
        banner=redact(banner, secrets),
        blocker=redact(blocker, secrets) if blocker else None,
        changes=report.changes,
        evidence=command_evidence(session),
        steps=session.steps_total,
        models=list(session.models_used),
        usage={
            name: Usage(prompt_tokens=prompt, completion_tokens=completion,
                        total_tokens=prompt + completion)
            for name, (prompt, completion) in session.usage.items()
        },
    )
