"""The narration guard's words: its exact texts, the grounding format and the ask-the-user test."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

GUARD_ROUND_NOTICE = (
    "Alright — getting started on the real build now (attempt {attempt} of {rounds})…"
)
"""Shown for each round of the first cycle; ``attempt`` counts within the cycle."""

SECOND_CYCLE_NOTICE = "Taking a completely different run at this — forcing the first move…"
"""Shown for each round of the second cycle, the one opened by the wake-up call."""

FORCED_ROUND_DIRECTIVE = (
    "[SYSTEM: FORCED ACTION] Your last reply described work without doing any: no file "
    "was written and no command ran. Do the work now. Begin with a mutating tool call "
    "(create_file, write_file, edit_file, delete_file, run_command, or a notebook cell "
    "edit); describing the work does not count."
)
"""The directive sent with every guard round except the wake-up round."""

NO_CHANGE_OFFER_NOTICE = "Checking whether this task needs a change, or only an answer…"
"""Shown for a first round that offers the typed "no change needed" choice."""

NO_CHANGE_OFFER_DIRECTIVE = (
    "[SYSTEM: CHANGE OR ANSWER] Your last reply changed nothing in the workspace. Decide now "
    "with a tool call. If the task asks for a change, make it: begin with a mutating tool call "
    "(create_file, write_file, edit_file, delete_file, run_command, or a notebook cell edit). "
    "If it asks only for an answer, read what the answer needs with the tools, then call "
    "finish with status no_change and the answer in summary. Describing a change does not "
    "make it."
)
"""The directive of a first guard round for a task whose demand for a change is unclear:
instead of forcing a mutation, it offers the typed "no change needed" choice."""

WAKE_UP_DIRECTIVE = (
    "[SYSTEM: WAKE-UP CALL] {rounds} rounds have passed and nothing in the workspace has "
    "changed: not one file written, not one command run. Your next response MUST begin with "
    "a mutating tool call — create_file, write_file, edit_file, or run_command. ZERO prose "
    "before the call."
)
"""The blunt directive of the first round of the second cycle."""

FORCED_CHOICE_FALLBACK_DIRECTIVE = (
    "[SYSTEM: ACTION REQUIRED] Only a mutating tool call counts on this step. Call one now — "
    "create_file, write_file, edit_file, or run_command. No text before the tool call: a "
    "reply without a mutating tool call fails this round."
)
"""Added to a round retried with ``tool_choice`` auto after a provider refused ``required``
(every tool is still offered, so the prompt's prefix stays the same: this text restricts)."""

GROUNDING_HEADER = (
    "[SYSTEM: GROUNDING — agent-executed, not model-generated] Current working directory: {cwd}"
)
"""First line of the workspace listing the agent makes itself, with no model involved."""

_FORCED_CHOICE_HINT = re.compile(r"tool[_ ]?choice|thinking|\brequired\b", re.IGNORECASE)
_TRAILING_DECORATION = frozenset(" \t\r\n*_~)]\"'”’»」』")


def guard_round_notice(attempt: int, rounds: int) -> str:
    """``Alright — getting started on the real build now (attempt N of 5)…``."""
    return GUARD_ROUND_NOTICE.format(attempt=attempt, rounds=rounds)


def wake_up_directive(rounds: int) -> str:
    """The wake-up call, naming how many rounds already failed."""
    return WAKE_UP_DIRECTIVE.format(rounds=rounds)


def format_grounding(cwd: str, entries: Sequence[tuple[str, bool]], limit: int) -> str:
    """The grounding message: the header, then up to ``limit`` ``dir: x`` / ``file: y`` lines.

    ``entries`` are ``(name, is_dir)`` pairs in the order the loop listed them. An empty
    directory says so; a longer listing ends with how many entries were left out.
    """
    lines = [GROUNDING_HEADER.format(cwd=cwd)]
    shown = entries[: max(limit, 0)]
    lines.extend(f"{'dir' if is_dir else 'file'}: {name}" for name, is_dir in shown)
    if not entries:
        lines.append("(the directory is empty)")
    elif len(entries) > len(shown):
        lines.append(f"… and {len(entries) - len(shown)} more entries")
    return "\n".join(lines)


def format_blocker(tool: str, result: str, limit: int) -> str:
    """``<tool>: <result, first limit chars>``, whitespace collapsed to keep one line."""
    flat = " ".join(result.split())
    return f"{tool}: {flat[:limit]}"


def forced_choice_rejected(error_status: int | None, error_text: str) -> bool:
    """True when a provider refused a forced ``tool_choice``: an HTTP 400 that mentions
    ``tool_choice``, thinking, or "required" (a thinking model's usual complaint)."""
    return error_status == 400 and _FORCED_CHOICE_HINT.search(error_text) is not None


def asks_user(text: str) -> bool:
    """True when the reply ends by asking the user a question.

    Anchored on the end: after trailing whitespace, markdown emphasis, closing brackets,
    closing quotes and emoji are set aside, the last character must be a question mark. A
    question earlier in the reply, a word that merely contains "ask" or "test", or a reply
    ending in a code block does not count.
    """
    end = len(text)
    while end > 0 and _is_decoration(text[end - 1]):
        end -= 1
    return end > 0 and text[end - 1] in ("?", "？")


def _is_decoration(char: str) -> bool:
    if char in _TRAILING_DECORATION:
        return True
    category = unicodedata.category(char)
    return category == "So" or char in ("\ufe0f", "\u200d")
