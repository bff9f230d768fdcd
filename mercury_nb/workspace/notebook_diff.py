"""A notebook's change cell by cell: nbdime's diff of the two versions, bounded for display."""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from mercury_nb.contract.notebook_changes import CellChange, LineOp, NotebookDiff, SourceLine
from mercury_nb.contract.redaction import known_secrets
from mercury_nb.contract.text_cut import clip

MAX_CELLS = 60
"""Cells shown per notebook; the rest are counted in ``more_cells``."""
MAX_LINES_PER_CELL = 60
"""Source diff lines shown per cell (context and gaps included); the rest are counted."""
MAX_LINES = 600
"""Source diff lines shown per notebook, all cells together."""
LINE_CHARS = 240
"""A longer source line is cut, with ``…``."""
CONTEXT_LINES = 2
"""Unchanged lines kept around each change; longer runs become one ``…`` line."""
OUTPUT_TEXT_CHARS = 60
"""The first line of an output's text, in the outputs summary, is cut after this many."""
MAX_NOTEBOOK_CHARS = 4_000_000
"""A larger notebook (both versions together) is not diffed cell by cell."""

_IGNORED_CELL_KEYS = {"execution_count", "id"}
"""A cell whose diff touches only these is not shown as changed."""


def notebook_change(path: str, before: str | None, after: str) -> NotebookDiff | None:
    """The change from ``before`` (None: the notebook was created) to ``after`` cell by
    cell, or None when ``path`` is no notebook or either version does not parse."""
    if not path.endswith(".ipynb") or len(after) + len(before or "") > MAX_NOTEBOOK_CHARS:
        return None
    import nbformat  # imported here: nbformat's validator costs ~1.5 s at import (jsonschema)
    from nbdime import diff_notebooks

    try:
        with warnings.catch_warnings():  # nbformat warns of what it repairs (duplicate ids)
            warnings.simplefilter("ignore")
            new = nbformat.reads(after, as_version=4)
            old = (nbformat.reads(before, as_version=4) if before is not None
                   else nbformat.v4.new_notebook())
            diff = diff_notebooks(old, new)
    except Exception:  # nbformat and nbdime raise many kinds on malformed JSON
        return None
    cells: list[CellChange] = []
    metadata_changed = False
    for entry in diff:
        if entry.key == "cells" and entry.op == "patch":
            cells = _cell_changes(old.cells, new.cells, entry.diff)
        elif entry.key == "metadata":
            metadata_changed = True
    shown, more = _bounded(cells)
    return NotebookDiff(cells=shown, more_cells=more, metadata_changed=metadata_changed,
                        sources_before=sources_digest(old.cells),
                        sources_after=sources_digest(new.cells))


def sources_digest(cells: Iterable[Any]) -> str:
    """SHA-256 of the cells' types and sources as compact JSON (``[["code","x = 1"],…]``),
    the same text the panel hashes from an open notebook's model."""
    pairs = [[str(cell.get("cell_type", "")), _source(cell)] for cell in cells]
    text = json.dumps(pairs, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def preview_lines(diff: NotebookDiff) -> list[str]:
    """One line per changed cell, for the short previews (cell widget, CLI)."""
    lines: list[str] = []
    for cell in diff.cells:
        first = next((ln for ln in cell.source if ln.op in ("+", "-")), None)
        words = (f"was cell {cell.number}, removed ({cell.cell_type})" if cell.kind == "removed"
                 else f"cell {cell.number} {cell.kind} ({cell.cell_type})")
        if first is not None:
            words += f": {first.op}{first.text}"
        elif cell.outputs:
            words += f": {cell.outputs}"
        lines.append(words)
    if diff.more_cells:
        lines.append(f"… {diff.more_cells} more changed cell(s)")
    if not lines and diff.metadata_changed:
        lines.append("notebook metadata changed (no cell changed)")
    return lines


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _cell_changes(old: Sequence[Any], new: Sequence[Any], diff: Any) -> list[CellChange]:
    """Walks nbdime's diff of the cell lists (keys are places in ``old``), numbering each
    change by the cell's place in ``new`` (in ``old``, for a removed cell)."""
    changes: list[CellChange] = []
    at_old, at_new = 0, 0
    for entry in _removals_first(diff):
        at_new += entry.key - at_old
        at_old = entry.key
        if entry.op == "addrange":
            for cell in entry.valuelist:
                at_new += 1
                changes.append(_whole("added", at_new, cell))
        elif entry.op == "removerange":
            for offset in range(entry.length):
                changes.append(_whole("removed", at_old + offset + 1, old[at_old + offset]))
            at_old += entry.length
        elif entry.op == "patch":
            change = _modified(old[at_old], new[at_new], entry.diff, at_old + 1, at_new + 1)
            if change is not None:
                changes.append(change)
            at_old, at_new = at_old + 1, at_new + 1
    return changes


def _removals_first(diff: Any) -> list[Any]:
    """nbdime's entries by key; at one key, what is removed there is shown before what is
    inserted before it, and both before the item at the key is patched."""
    order = {"removerange": 0, "addrange": 1, "patch": 2}
    return sorted(diff, key=lambda e: (e.key, order.get(e.op, 3)))


def _written(change: CellChange, cell: Any) -> CellChange:
    """``change`` with the cell's id and the task that wrote it (``metadata.mercury.task``)."""
    mercury = (cell.get("metadata") or {}).get("mercury")
    task = mercury.get("task") if isinstance(mercury, dict) else None
    return change.model_copy(update={"cell_id": str(cell.get("id") or ""),
                                     "task": task if isinstance(task, str) else ""})


def _whole(kind: str, number: int, cell: Any) -> CellChange:
    op: LineOp = "+" if kind == "added" else "-"
    lines = [SourceLine(op=op, text=_cut(line)) for line in _source(cell).splitlines()]
    outputs = cell.get("outputs", [])
    change = CellChange(kind=kind,  # type: ignore[arg-type]  # "added" | "removed"
                        number=number, cell_type=str(cell.get("cell_type", "code")),
                        source=lines, outputs=_outputs_summary(outputs) if outputs else "")
    return _written(change, cell) if kind == "added" else change


def _modified(old: Any, new: Any, diff: Any, before: int, after: int) -> CellChange | None:
    keys = {entry.key for entry in diff}
    if keys <= _IGNORED_CELL_KEYS:
        return None
    source: list[SourceLine] = []
    for entry in diff:
        if entry.key == "source" and entry.op == "patch":
            source = _with_context(_source_diff(_source(old), entry.diff))
        elif entry.key == "source":  # replaced whole (nbdime does so for a cell type change)
            source = [SourceLine(op="-", text=_cut(ln)) for ln in _source(old).splitlines()]
            source += [SourceLine(op="+", text=_cut(ln)) for ln in _source(new).splitlines()]
    outputs = ""
    if "outputs" in keys:
        was, now = old.get("outputs", []), new.get("outputs", [])
        outputs = f"outputs: {len(was)} → {len(now)}"
        if now:
            outputs += ": " + _output_kinds(now)
    return _written(CellChange(kind="modified", number=after,
                               number_before=before if before != after else None,
                               cell_type=str(new.get("cell_type", "code")), source=source,
                               outputs=outputs, metadata_changed="metadata" in keys), new)


def _source_diff(old: str, diff: Any) -> list[SourceLine]:
    """nbdime's line diff of one source (keys are line numbers in ``old``) as lines."""
    lines = old.splitlines(keepends=True)
    shown: list[SourceLine] = []
    at = 0
    for entry in _removals_first(diff):
        shown += [SourceLine(op=" ", text=_cut(line)) for line in lines[at:entry.key]]
        at = max(at, entry.key)
        if entry.op == "addrange":
            shown += [SourceLine(op="+", text=_cut(line)) for line in entry.valuelist]
        elif entry.op == "removerange":
            shown += [SourceLine(op="-", text=_cut(line)) for line in lines[at:at + entry.length]]
            at += entry.length
        elif entry.op == "patch":  # one line changed within (a character-level diff)
            shown.append(SourceLine(op="-", text=_cut(lines[at])))
            from nbdime.patching import patch_singleline_string

            changed = patch_singleline_string(lines[at], entry.diff)
            shown.append(SourceLine(op="+", text=_cut(changed)))
            at += 1
    shown += [SourceLine(op=" ", text=_cut(line)) for line in lines[at:]]
    return shown


def _with_context(lines: list[SourceLine]) -> list[SourceLine]:
    """Unchanged lines farther than :data:`CONTEXT_LINES` from a change become one gap."""
    near = [ln.op != " " for ln in lines]
    keep = [any(near[max(0, i - CONTEXT_LINES): i + CONTEXT_LINES + 1]) for i in range(len(lines))]
    shown: list[SourceLine] = []
    gap = 0
    for line, kept in zip(lines, keep, strict=True):
        if kept:
            if gap:
                shown.append(SourceLine(op="…", text=f"{gap} unchanged line(s)"))
                gap = 0
            shown.append(line)
        else:
            gap += 1
    if gap:
        shown.append(SourceLine(op="…", text=f"{gap} unchanged line(s)"))
    return shown


def _outputs_summary(outputs: Sequence[Any]) -> str:
    """``2 outputs: stream "hello", execute_result "42"``: kinds and first lines, no data."""
    noun = "output" if len(outputs) == 1 else "outputs"
    return f"{len(outputs)} {noun}: {_output_kinds(outputs)}"


def _output_kinds(outputs: Sequence[Any]) -> str:
    parts = []
    for output in outputs[:4]:
        kind = str(output.get("output_type", "output"))
        text = _output_text(output)
        parts.append(f'{kind} "{_cut(text, OUTPUT_TEXT_CHARS)}"' if text else kind)
    if len(outputs) > 4:
        parts.append(f"… {len(outputs) - 4} more")
    return ", ".join(parts)


def _output_text(output: Any) -> str:
    if output.get("output_type") == "error":
        return f"{output.get('ename', '')}: {output.get('evalue', '')}"
    raw = output.get("text") if "text" in output else output.get("data", {}).get("text/plain")
    text = "".join(raw) if isinstance(raw, list) else str(raw or "")
    return next((ln for ln in text.splitlines() if ln.strip()), "")


def _cut(text: str, limit: int = LINE_CHARS) -> str:
    text = text.rstrip("\r\n")
    return clip(text, limit, known_secrets(None, os.environ))  # redacted before the cut


def _bounded(cells: list[CellChange]) -> tuple[list[CellChange], int]:
    """At most :data:`MAX_CELLS` cells and :data:`MAX_LINES` source lines in all."""
    shown: list[CellChange] = []
    budget = MAX_LINES
    for cell in cells[:MAX_CELLS]:
        if budget <= 0:
            break
        room = min(MAX_LINES_PER_CELL, budget)
        kept = cell.source[:room]
        budget -= len(kept)
        more = len(cell.source) - len(kept) + cell.source_more
        shown.append(cell.model_copy(update={"source": kept, "source_more": more}))
    return shown, len(cells) - len(shown)
