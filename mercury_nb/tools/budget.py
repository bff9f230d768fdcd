"""How many characters one tool result may hold: the config's cap, lowered to fit the context.

The loop puts the current model's budget (see ``contract.recovery.context_budget``) into
``ToolContext.result_max_chars`` before it runs a step's tools; tools that can page
(read_file) fill at most that much, and every other result is cut to it at the source.
"""

from __future__ import annotations

from mercury_nb.tools.base import ToolContext


def result_budget(ctx: ToolContext, cap: int | None = None) -> int:
    """The characters a result may hold: ``cap`` (default ``read_file_max_chars``), or the
    context's budget when that is smaller."""
    limit = ctx.config.read_file_max_chars if cap is None else cap
    known = ctx.result_max_chars
    if known is not None and known > 0:
        return min(limit, known)
    return limit
