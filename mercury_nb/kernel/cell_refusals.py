"""How a ``%%mercury`` cell words the door's refusals of its own settings (a ``UsageError``)."""

from __future__ import annotations

from mercury_nb.contract.config_limits import STEPS_RANGE_WORDS
from mercury_nb.runs.lookup import Refusal

CELL_USAGE_REFUSALS = frozenset({"empty-task", "bad-workdir", "bad-max-steps", "bad-settings"})
"""Refusals of the cell's own settings: a ``UsageError`` with the usage, not a printed line."""


def refusal_text(refusal: Refusal, usage: str) -> str:
    """How a cell words a refusal of its settings (``usage``, the magic's, follows)."""
    match refusal.kind:
        case "empty-task":
            return ("%%mercury needs a task: write it on the lines below the %%mercury line."
                    f"\n{usage}")
        case "bad-workdir":
            return f"workdir {refusal.value!r} is not a directory\n{usage}"
        case "bad-max-steps":
            return f"invalid mercury settings — max_steps must be {STEPS_RANGE_WORDS}\n{usage}"
        case _:
            return f"invalid mercury settings — {refusal.value}\n{usage}"
