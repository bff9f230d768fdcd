"""Whether a notebook is open in JupyterLab now: its edits then go to the open document."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from mercury_nb.contract.live_edit import Live, LiveEditLimits, route
from mercury_nb.tools.base import LiveEdits, ToolContext, ToolError

WHOLE_FILE_REFUSED = (
    "{rel} is open in JupyterLab: change its cells with edit_notebook_cell, "
    "insert_notebook_cell or delete_notebook_cell, which edit the open document (a write of "
    "the whole file would make JupyterLab reload it, or ask the user, and lose their unsaved "
    "typing)")


def is_open(edits: LiveEdits | None, limits: LiveEditLimits, path: Path) -> bool:
    """Whether JupyterLab reported ``path`` open lately (fresh: see ``route``) in the
    live-edit tables ``edits`` (None: no Lab)."""
    if edits is None:
        return False
    try:
        return isinstance(route(edits.seen_at(path), time.time(), limits), Live)
    except (OSError, sqlite3.Error):  # an unusable ledger: as if no Lab were attached
        return False


def open_in_lab(ctx: ToolContext, path: Path) -> bool:
    """Whether the panel reports the notebook ``path`` open in JupyterLab."""
    return path.suffix == ".ipynb" and is_open(ctx.live_edits, ctx.config, path)


def refuse_if_open(ctx: ToolContext, path: Path, rel: str) -> None:
    """A whole-file tool's refusal of a notebook open in JupyterLab (else nothing)."""
    if open_in_lab(ctx, path):
        raise ToolError(WHOLE_FILE_REFUSED.format(rel=rel))
