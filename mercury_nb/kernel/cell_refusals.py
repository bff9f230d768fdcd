"""How a ``%%mercury`` cell words the door's refusals: of its own settings (a ``UsageError``),
and a start refused for want of a key (printed once; nothing started, nothing recorded)."""

from __future__ import annotations

from mercury_nb.contract.config_limits import STEPS_RANGE_WORDS
from mercury_nb.runs.lookup import Refusal

CELL_USAGE_REFUSALS = frozenset({"empty-task", "bad-workdir", "bad-max-steps", "bad-settings"})
"""Refusals of the cell's own settings: a ``UsageError`` with the usage, not a printed line."""
NOT_STARTED = ("Nothing was recorded: set the key and run the cell again, or run offline with "
               "a demo model: --model scripted/quickstart")
"""Under a ``missing-key`` refusal's error: there is no failed task to continue."""


def refusal_text(refusal: Refusal, usage: str) -> str:
    """How a cell words a refusal (``usage``, the magic's, follows a refusal of its
    settings); any other refusal is its message, a missing key's with :data:`NOT_STARTED`."""
    match refusal.kind:
        case "missing-key":
            why = (refusal.value or refusal.message).rstrip(".")
            return f"Not started: {why}.\n{NOT_STARTED}"
        case "empty-task":
            return ("%%mercury needs a task: write it on the lines below the %%mercury line."
                    f"\n{usage}")
        case "bad-workdir":
            return f"workdir {refusal.value!r} is not a directory\n{usage}"
        case "bad-max-steps":
            return f"invalid mercury settings — max_steps must be {STEPS_RANGE_WORDS}\n{usage}"
        case "bad-settings":
            return f"invalid mercury settings — {refusal.value}\n{usage}"
        case _:
            return refusal.message
