"""How a ``%%mercury`` cell words the door's refusals of its own settings (a ``UsageError``)."""

from __future__ import annotations

from mercury_nb.runs.lookup import Refusal

CELL_USAGE_REFUSALS = frozenset({"bad-workdir", "bad-max-steps", "bad-settings"})
"""Refusals of the cell's own settings: a ``UsageError`` with the usage, not a printed line."""


def refusal_text(refusal: Refusal) -> str:
    """How a cell words a refusal of its settings (the usage follows)."""
    from mercury_nb.kernel import magics

    match refusal.kind:
        case "bad-workdir":
            return f"workdir {refusal.value!r} is not a directory\n{magics.usage()}"
        case "bad-max-steps":
            return ("invalid mercury settings — max_steps: Input should be greater than or "
                    f"equal to 1\n{magics.usage()}")
        case _:
            return f"invalid mercury settings — {refusal.value}\n{magics.usage()}"
