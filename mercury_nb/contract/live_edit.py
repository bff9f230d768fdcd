"""Live edits of notebooks open in JupyterLab: settings, pure route and CAS decisions."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal, assert_never

from pydantic import BaseModel, ConfigDict, Field


class LiveEditLimits(BaseModel):
    """The fields of :class:`~mercury_nb.contract.config.MercuryConfig` for live edits of
    notebooks open in JupyterLab (``MERCURY_<FIELD>`` like every other field)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    live_edit_wait_s: float = Field(default=3.0, ge=0)
    """How long a notebook tool waits for JupyterLab to apply an edit to the open notebook
    before it edits the file on disk instead (0: never edit live)."""

    live_open_fresh_s: float = Field(default=10.0, gt=0)
    """A notebook counts as open in JupyterLab while the panel reported it this recently."""

    live_poll_s: float = Field(default=20.0, gt=0)
    """How long the server holds the panel's poll for edit requests before it answers empty
    (the panel asks again at once)."""

    live_tick_s: float = Field(default=0.01, gt=0, le=1)
    """How often a waiting tool and a held poll look at the ledger for news."""


def source_sha(source: str) -> str:
    """SHA-256 (hex) of a cell's source as UTF-8: what an edit request names as the source the
    agent last read (the labextension hashes the open cell the same way)."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


EditOp = Literal["edit", "insert", "delete", "outputs"]
"""What an edit request asks of the open notebook (its ``op``)."""


@dataclass(frozen=True)
class Live:
    """Send the edit to the open notebook."""


@dataclass(frozen=True)
class Disk:
    """Edit the file on disk: why not live."""

    why: Literal["disabled", "not-open", "stale"]


Route = Live | Disk


def route(seen_at: float | None, now: float, limits: LiveEditLimits) -> Route:
    """Live when JupyterLab reported the notebook open within ``live_open_fresh_s`` of
    ``now`` (and live edits are on); else the disk edit."""
    if limits.live_edit_wait_s <= 0:
        return Disk("disabled")
    if seen_at is None:
        return Disk("not-open")
    if now - seen_at > limits.live_open_fresh_s:
        return Disk("stale")
    return Live()


@dataclass(frozen=True)
class Apply:
    """The cell holds the source the agent read: the edit goes ahead."""


@dataclass(frozen=True)
class Refuse:
    """The cell changed since the agent read it: its source now."""

    current: str


@dataclass(frozen=True)
class Gone:
    """No cell with that id any more."""


Swap = Apply | Refuse | Gone


def swap(current: str | None, read_sha: str) -> Swap:
    """Compare-and-swap on one cell: ``current`` its source now (None: no such cell),
    ``read_sha`` the :func:`source_sha` of the source the agent last read."""
    if current is None:
        return Gone()
    if source_sha(current) != read_sha:
        return Refuse(current)
    return Apply()


def live_refusal_text(cell: str, decision: Swap) -> str | None:
    """The tool result of a refused edit, or None when it goes ahead."""
    match decision:
        case Apply():
            return None
        case Refuse(current):
            return f"refused: cell {cell} changed since you read it; its source now: {current}"
        case Gone():
            return f"refused: cell {cell} is no longer in the notebook (read it again)"
        case _:
            assert_never(decision)
