"""The mark of a verification kernel (a notebook re-run as evidence): no agent starts there."""

from __future__ import annotations

from collections.abc import Mapping

VERIFICATION_RUN_ENV = "MERCURY_VERIFICATION_RUN"
"""The variable the notebook check sets (to ``1``) for the fresh kernel it starts, and for
that kernel alone: the config model's ``verification_run`` field, by its usual name."""

SKIPPED_IN_VERIFICATION = "skipped: agents do not run during verification"
"""The one line a ``%%mercury`` cell (or ``%mercury`` line) prints in a verification kernel,
where it starts nothing and passes."""

FALSE_WORDS = frozenset({"0", "off", "f", "false", "n", "no"})
"""The words the config model reads as False (pydantic's, any case; a test holds them equal),
so the magic reads the mark as the model does, without importing pydantic at ``%load_ext``."""


def in_verification_run(environ: Mapping[str, str]) -> bool:
    """Whether ``environ`` marks a verification kernel. Only this variable is read (a bad
    value of another ``MERCURY_*`` variable cannot make a cell start its agent); a value set
    but unreadable counts as marked, the side on which nothing starts."""
    raw = environ.get(VERIFICATION_RUN_ENV, "").strip().lower()
    return bool(raw) and raw not in FALSE_WORDS


def is_agent_cell(source: str) -> bool:
    """Whether a cell's source runs mercury's magic (``%%mercury``, a ``%mercury`` line): its
    outputs are the agent's own (a task's widget and verdict, an undo's report), which a
    verification kernel's run of it (:data:`SKIPPED_IN_VERIFICATION`) must not replace."""
    return any(line.lstrip().startswith(("%%mercury", "%mercury"))
               for line in source.splitlines())
