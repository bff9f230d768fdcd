"""The resume turn: what a paused task is told when it continues (the task, what is done, what
remains), built from measured facts, never the bare word "continue"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.gate.verification import (
    CheckFailed,
    CheckStale,
    EvidenceVerdict,
    NoCheck,
    Verified,
)
from mercury_nb.contract.recovery.continuation import restate_task
from mercury_nb.contract.text_cut import clip
from mercury_nb.contract.vocabulary import TurnVerdict

RESUME_HEADER = (
    "[SYSTEM: RESUME] The user asked you to continue this task where it paused. "
    "The task is NOT done — do not summarize or wrap up."
)
"""First line of the resume turn (a step-budget pause opens with the step-budget nudge)."""
QUESTION_HEADER = "[SYSTEM: RESUME] The user asked you to continue this question where it paused."
"""First line of the resume turn of a question (no work to finish, no check to run)."""

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
PAUSED_BY = "Why it paused: {blocker}"
REMAINS_STEP_BUDGET = "What remains: the work the step budget cut off."
REMAINS_DEFAULT = "What remains: finish the task."
REMAINS_ANSWER = "What remains: answer the question."
REMAINS_RESET = (
    "What remains: the whole task — it stopped because of the settings it ran under (the "
    "model, its server or its window), and those have changed."
)
REMAINS_CHECK = (
    "Then run a check (the project's tests, or the program the task asks for) that passes "
    "after your last change."
)
RESUME_ACT = "Carry on with tools now; the user's word \"continue\" means this task."
USER_WORDS = "Carry on with tools now, following what the user adds in the next message."
ANSWER_ACT = "Answer it now; read the files it names with tools first if you need them."
ANSWER_USER_WORDS = "Answer it now, following what the user adds in the next message."


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


def last_check_of(verdict: EvidenceVerdict) -> LastCheck | None:
    """The check the resume turn names: the one the completion gate judges by
    (``judge_evidence``, which counts the runs the task asked for, ``python hello.py`` for
    "run it", even when that run is the last change)."""
    match verdict:
        case Verified(check=check) | CheckFailed(check=check):
            return LastCheck(check.command, check.exit_code, check.timed_out)
        case CheckStale(check=check):
            return LastCheck(check.command, check.exit_code, check.timed_out,
                             after_last_change=False)
        case NoCheck():
            return None
        case _ as unreachable:
            assert_never(unreachable)


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
    question: bool = False
    """The task asks a question (``TaskIntent.QUESTION``): there is nothing to finish or check."""
    settings_changed: bool = False
    """The ending came from the settings it ran under (a model without tools, a window too
    small, providers that refused it) and the continue changed them: its blocker (about the
    old model or window) is not what remains."""


def _cut(text: str, limit: int) -> str:
    return clip(" ".join(text.split()), limit)  # redacted before the cut


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


def answering(facts: ResumeFacts) -> bool:
    """The resume answers a question: the task reads as one and changed no file (a question
    whose run changed files did work, as the router counts it)."""
    return facts.question and not facts.changed


def paused_by_step_budget(facts: ResumeFacts) -> bool:
    """The last turn used up its step budget and no other blocker was named (a step-budget
    pause has none; a task stopped later, by a crash say, names that instead)."""
    return facts.last_verdict is TurnVerdict.STEPS_EXHAUSTED and not facts.blocker


def _remains(facts: ResumeFacts, config: MercuryConfig) -> list[str]:
    if facts.settings_changed:
        lines = [REMAINS_RESET]
    elif paused_by_step_budget(facts) and not answering(facts):
        lines = [REMAINS_STEP_BUDGET]
    else:
        lines = [REMAINS_ANSWER if answering(facts) else REMAINS_DEFAULT]
        if facts.blocker:
            blocker = _cut(facts.blocker, config.blocker_chars)
            ends = blocker.endswith((".", "?", "!", "…"))
            lines.insert(0, PAUSED_BY.format(blocker=blocker if ends else blocker + "."))
    verified = facts.last_check is not None and facts.last_check.passed \
        and facts.last_check.after_last_change
    if not verified and not answering(facts):
        lines.append(REMAINS_CHECK)
    return lines


def _act(facts: ResumeFacts) -> str:
    if answering(facts):
        return ANSWER_USER_WORDS if facts.user_words else ANSWER_ACT
    return USER_WORDS if facts.user_words else RESUME_ACT


def resume_message(facts: ResumeFacts, config: MercuryConfig) -> str:
    """The resume turn's text. A task paused by its step budget (:func:`paused_by_step_budget`)
    opens with the step-budget nudge and the task restated (``continuation.restate_task``);
    any other opens with :data:`RESUME_HEADER` and the task restated. A question opens with
    :data:`QUESTION_HEADER` and is told neither that work is unfinished nor to run a check:
    its check line shows only a check that ran."""
    if paused_by_step_budget(facts) and not answering(facts):
        lines = [restate_task(facts.task, config)]
    else:
        excerpt = facts.task.strip()[: config.task_restate_chars]
        header = QUESTION_HEADER if answering(facts) else RESUME_HEADER
        lines = [header, RESUME_TASK.format(excerpt=excerpt)]
    if not answering(facts):
        lines.append(_files_line(facts.changed, config))
    if facts.last_check is not None or not answering(facts):
        lines.append(_check_line(facts.last_check, config))
    lines.extend(_remains(facts, config))
    lines.append(_act(facts))
    return "\n".join(lines)
