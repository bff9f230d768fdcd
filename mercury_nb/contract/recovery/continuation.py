"""Steps-exhausted and truncation recovery, and the output-limit halving, as pure policies."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.bounded import GiveUp, Retry, bounded

AUTO_CONTINUE_NOTICE = (
    "This one's a bigger build than a single pass — picking up right where I left off…"
)
"""Shown to the user each time a fresh step budget is granted."""

STEP_BUDGET_NUDGE = (
    "[SYSTEM: STEP BUDGET] You reached the tool-step budget for this task. "
    "The task is NOT done — do not summarize or wrap up."
)
"""First line of the message appended when a fresh step budget is granted."""

TRUNCATED_STEP_PROMPT = (
    "[SYSTEM] Your previous response hit the output-token limit and was cut off… Do not "
    "continue it and do not repeat it. Take the next step of the task now with a tool call, "
    "or, if the work is done and verified, finish with a summary of a few sentences."
)
"""Appended after a prose reply of a work task was cut by the output-token limit: more of
the same prose would be cut again (under 400 chars)."""

TRUNCATED_ANSWER_PROMPT = (
    "[SYSTEM] Your previous response hit the output-token limit and was cut off… Do not "
    "continue it. Answer again from the start, shorter and complete, within {tokens:,} "
    "tokens (about {words:,} words)."
)
"""Appended after a prose answer to a question was cut by the output-token limit."""

TRUNCATED_WRITE_PROMPT = (
    "[SYSTEM: WRITE TRUNCATED] Your file write was cut off… the file was NOT written. "
    "Do NOT retry the same giant write.{target} Write it in sections instead: first call "
    "create_file with about the first {lines} lines, then call edit_file with an empty "
    "old_text to append the next ~{lines} lines, and repeat those appends of about {lines} "
    "lines each until the file is complete."
)
"""Appended after a step whose tool-call arguments were cut by the output-token limit."""


def restate_task(task: str, config: MercuryConfig) -> str:
    """The nudge that opens a fresh step budget, with the task restated."""
    excerpt = task.strip()[: config.task_restate_chars]
    return f'{STEP_BUDGET_NUDGE}\nThe task remains: "{excerpt}"'


@dataclass(frozen=True)
class StepBudgetState:
    """Fresh step budgets granted so far in this task."""

    continuations: int = 0


@dataclass(frozen=True)
class AutoContinue:
    """Grant a fresh step budget: append ``nudge``, show ``notice``."""

    nudge: str
    notice: str
    number: int
    """Which continuation this is, from 1."""


@dataclass(frozen=True)
class PauseStepBudget:
    """The automatic continuations are used up: pause honestly, resumable."""

    continuations: int


StepBudgetDecision = AutoContinue | PauseStepBudget


def on_steps_exhausted(
    state: StepBudgetState, task: str, config: MercuryConfig
) -> tuple[StepBudgetState, StepBudgetDecision]:
    """Up to ``config.max_auto_continuations`` fresh budgets, then a pause."""
    match bounded(state.continuations, config.max_auto_continuations):
        case GiveUp(attempts=used):
            return state, PauseStepBudget(continuations=used)
        case Retry(attempt=number):
            decision = AutoContinue(
                nudge=restate_task(task, config), notice=AUTO_CONTINUE_NOTICE, number=number
            )
            return replace(state, continuations=number), decision
        case _ as unreachable:
            assert_never(unreachable)


@dataclass(frozen=True)
class TruncationState:
    """Resume rounds used so far in this task after output-limit cuts."""

    rounds: int = 0
    prose_rounds: int = 0
    """Of those, rounds after a cut prose reply."""


@dataclass(frozen=True)
class TruncationObservation:
    """What the truncated step contained.

    ``cut_write`` is true when the step carried tool calls: their arguments are cut,
    so nothing of them runs. ``path`` names the file when it could be read from them.
    """

    cut_write: bool
    path: str | None = None
    answering: bool = False
    """The task is a question: a cut prose reply is an answer to give again, shorter."""
    reply_cap: int | None = None
    """``max_tokens`` the cut reply had (None: unknown; ``reply_max_tokens`` is assumed)."""


@dataclass(frozen=True)
class ResumeTruncated:
    """Resume with the full budget and ``prompt`` appended."""

    prompt: str
    round: int
    """Which resume round this is, from 1."""


@dataclass(frozen=True)
class PauseTruncated:
    """The resume rounds are used up: pause honestly."""

    rounds: int


TruncationDecision = ResumeTruncated | PauseTruncated


def truncation_prompt(obs: TruncationObservation, config: MercuryConfig) -> str:
    """The sectioned-write demand for a cut write; for cut prose, never "continue": a work
    task takes its next step, a question is answered again within half the cut reply's cap."""
    if not obs.cut_write:
        if not obs.answering:
            return TRUNCATED_STEP_PROMPT
        tokens = max(1, (obs.reply_cap or config.reply_max_tokens) // 2)
        return TRUNCATED_ANSWER_PROMPT.format(tokens=tokens, words=tokens * 3 // 4)
    target = f" The file was {obs.path}." if obs.path else ""
    return TRUNCATED_WRITE_PROMPT.format(target=target, lines=config.sectioned_write_lines)


def on_truncated(
    state: TruncationState, obs: TruncationObservation, config: MercuryConfig
) -> tuple[TruncationState, TruncationDecision]:
    """Up to ``config.max_truncation_rounds`` resume rounds, of which at most
    ``config.max_prose_truncation_rounds`` after cut prose, then the truncation pause."""
    prose = not obs.cut_write
    rounds = bounded(state.rounds, config.max_truncation_rounds)
    prose_rounds = bounded(state.prose_rounds, config.max_prose_truncation_rounds)
    if isinstance(rounds, GiveUp) or (prose and isinstance(prose_rounds, GiveUp)):
        return state, PauseTruncated(rounds=state.rounds)
    decision = ResumeTruncated(prompt=truncation_prompt(obs, config), round=rounds.attempt)
    return replace(state, rounds=rounds.attempt,
                   prose_rounds=state.prose_rounds + int(prose)), decision


_LIMIT_NAMES = frozenset(
    {
        "max_tokens",
        "max_completion_tokens",
        "max_output_tokens",
        "max_new_tokens",
        "maxtokens",
        "maxoutputtokens",
        "max_tokens_to_sample",
    }
)
_TOKEN = re.compile(r"[a-z_]+")
_OUTPUT_LIMIT_PHRASES = (
    ("output", "limit"),
    ("output", "token", "limit"),
    ("output", "tokens", "limit"),
)
_NOT_ABOUT_SIZE = (("rate", "limit"), ("quota",), ("too", "many", "requests"))


def _contains(words: list[str], phrase: tuple[str, ...]) -> bool:
    size = len(phrase)
    return any(tuple(words[i : i + size]) == phrase for i in range(len(words) - size + 1))


def mentions_output_limit(error_text: str) -> bool:
    """Word-level and case-insensitive: the error names max_tokens (or a sibling),
    an output limit, something too large, or a value that exceeds one. Rate-limit and
    quota errors are not about output size even when something was "exceeded"."""
    words = _TOKEN.findall(error_text.lower())
    if any(_contains(words, phrase) for phrase in _NOT_ABOUT_SIZE):
        return False
    return (
        any(word in _LIMIT_NAMES for word in words)
        or _contains(words, ("max", "tokens"))
        or any(_contains(words, phrase) for phrase in _OUTPUT_LIMIT_PHRASES)
        or _contains(words, ("too", "large"))
        or any(word.startswith("exceed") for word in words)
    )


def next_max_tokens(current: int, error_text: str, floor: int) -> int | None:
    """Half of ``current``, not below ``floor``, when the provider rejected the output
    size; None when the error is about something else or ``current`` is at the floor.
    The caller keeps the value for the rest of the task."""
    if current <= floor or not mentions_output_limit(error_text):
        return None
    return max(current // 2, floor)
