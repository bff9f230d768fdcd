"""A notebook's change cell by cell (built from nbdime's diff): the shape the panel renders."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

LineOp = Literal["+", "-", " ", "…"]
"""A source line added, removed, kept as context, or a gap of unchanged lines left out."""


class SourceLine(BaseModel):
    """One line of a cell's source diff: ``op`` says what happened to ``text``."""

    model_config = ConfigDict(frozen=True)

    op: LineOp
    text: str


class CellChange(BaseModel):
    """One cell added, removed or modified. ``number`` is the cell's 1-based place in the
    notebook after the change (before it, for a removed cell); ``number_before`` its place
    before, for a modified cell that moved."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["added", "removed", "modified"]
    number: int
    number_before: int | None = None
    cell_type: str = "code"
    source: list[SourceLine] = []
    """The source diff, bounded; ``source_more`` counts the lines left out."""
    source_more: int = 0
    outputs: str = ""
    """The outputs summarised (``2 outputs: stream, execute_result``), never their data;
    for a modified cell, before and after (``outputs: 1 → 2``); empty when unchanged."""
    metadata_changed: bool = False
    cell_id: str = ""
    """The cell's id after the change (empty: none, before nbformat 4.5, or removed)."""
    task: str = ""
    """The task that wrote the cell, from its ``metadata.mercury`` (empty: not the agent's):
    the panel's detail links to the cells its task wrote."""


class NotebookDiff(BaseModel):
    """A notebook's change: its cells, bounded (``more_cells`` counts those left out), and
    whether the notebook's own metadata changed (a kernel's ``language_info``, say)."""

    model_config = ConfigDict(frozen=True)

    cells: list[CellChange] = []
    more_cells: int = 0
    metadata_changed: bool = False
    sources_before: str = ""
    """The SHA-256 of the cells' types and sources at the start (:func:`sources_digest`
    in mercury_nb.workspace.notebook_diff): an open notebook whose cells still match it
    has no edits of its own to lose, however dirty its metadata or outputs."""
    sources_after: str = ""
