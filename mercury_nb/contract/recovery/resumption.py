"""The resume turn: what a paused task is told when it continues (the task, what is done, what
remains), built from measured facts, never the bare word "continue"."""

from __future__ import annotations

from dataclasses import dataclass

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.continuation import restate_task
from mercury_nb.contract.vocabulary import TurnVerdict

RESUME_HEADER = (
    "[SYSTEM: RESUME] The user asked you to continue this task where it paused. "
    "The task is NOT done — do not summarize or wrap up."
)
"""First line of the resume turn (a step-budget pause opens with the step-budget nudge)."""

RESUME_TASK = 'The task remains: "{excerpt}"'
DONE_FILES = "Done so far — files changed since the task started: {files}."
MORE_FILES = "{shown} and {more} more"
NOTHING_DONE = "Done so far: no file has changed since the task started."
LAST_CHECK = "Last check: `{command}` {result}{when}."
NO_CHECK = "Last check: none — no build or test has run yet."
CHECK_PASSED = "passed"
CHECK_FAILED = "failed (exit code {code})"
CHECK_TIMED_OUT = "timed out"
CHECK_NO_EXIT = "did not finish"
CHECK_BEFORE_CHANGE = ", before the last change"
REMAINS_BLOCKER = "What remains: {blocker}"
REMAINS_STEP_BUDGET = "What remains: the work the step budget cut off."
REMAINS_DEFAULT = "What remains: finish the task."
REMAINS_CHECK = (
    "Then run a check (the project's tests, or the program the task asks for) that passes "
    "after your last change."
)
RESUME_ACT = "Carry on with tools now; the user's word \"continue\" means this task."
USER_WORDS = "Carry on with tools now, following what the user adds in the next message."


@dataclass(frozen=True)
class LastCheck:
    """The newest check command of the task and how it ended."""

    command: str
    exit_code: int | None
    timed_out: bool = False
    after_last_change: bool = True

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@dataclass(frozen=True)
class ResumeFacts:
    """What is known when a paused task resumes: measured changes, its last check, why it
    paused (the last turn's verdict and the blocker line of its ending)."""

    task: str
    changed: tuple[str, ...] = ()
    """Changed files as change lines (``hello.py (created)``), measured against the start."""
    last_check: LastCheck | None = None
    last_verdict: TurnVerdict | None = None
    blocker: str | None = None
    user_words: str | None = None
    """What the user said beyond the bare "continue" (sent as their own turn after this)."""


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _files_line(changed: tuple[str, ...], config: MercuryConfig) -> str:
    if not changed:
        return NOTHING_DONE
    shown = ", ".join(changed[: config.resume_listed_files])
    more = len(changed) - config.resume_listed_files
    files = MORE_FILES.format(shown=shown, more=more) if more > 0 else shown
    return DONE_FILES.format(files=files)


def _check_line(check: LastCheck | None, config: MercuryConfig) -> str:
    if check is None:
        return NO_CHECK
    if check.timed_out:
        result = CHECK_TIMED_OUT
    elif check.exit_code is None:
        result = CHECK_NO_EXIT
    elif check.exit_code == 0:
        result = CHECK_PASSED
    else:
        result = CHECK_FAILED.format(code=check.exit_code)
    when = "" if check.after_last_change else CHECK_BEFORE_CHANGE
    return LAST_CHECK.format(command=_cut(check.command, config.blocker_chars), result=result,
                             when=when)


def paused_by_step_budget(facts: ResumeFacts) -> bool:
    """The last turn used up its step budget and no other blocker was named (a step-budget
    pause has none; a task stopped later, by a crash say, names that instead)."""
    return facts.last_verdict is TurnVerdict.STEPS_EXHAUSTED and not facts.blocker


def _remains(facts: ResumeFacts, config: MercuryConfig) -> list[str]:
    if facts.blocker:
        lines = [REMAINS_BLOCKER.format(blocker=_cut(facts.blocker, config.blocker_chars))]
    elif paused_by_step_budget(facts):
        lines = [REMAINS_STEP_BUDGET]
    else:
        lines = [REMAINS_DEFAULT]
    verified = facts.last_check is not None and facts.last_check.passed \
        and facts.last_check.after_last_change
    if not verified:
        lines.append(REMAINS_CHECK)
    return lines


def resume_message(facts: ResumeFacts, config: MercuryConfig) -> str:
    """The resume turn's text. A task paused by its step budget (:func:`paused_by_step_budget`)
    opens with the step-budget nudge and the task restated (``continuation.restate_task``);
    any other opens with :data:`RESUME_HEADER` and the task restated."""
    if paused_by_step_budget(facts):
        lines = [restate_task(facts.task, config)]
    else:
        excerpt = facts.task.strip()[: config.task_restate_chars]
        lines = [RESUME_HEADER, RESUME_TASK.format(excerpt=excerpt)]
    lines.append(_files_line(facts.changed, config))
    lines.append(_check_line(facts.last_check, config))
    lines.extend(_remains(facts, config))
    lines.append(USER_WORDS if facts.user_words else RESUME_ACT)
    return "\n".join(lines)
