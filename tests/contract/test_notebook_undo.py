"""The live undo's cell planner: from the notebook the task left back to the one before it,
per cell id; a cell the open notebook left alone in words; the undo's own record built by
taking cells from one notebook into another."""

from __future__ import annotations

from typing import Any

import pytest

from mercury_nb.contract.live_edit import source_sha
from mercury_nb.contract.notebook_undo import (
    Answer,
    CellOp,
    DeleteInserted,
    EditBack,
    Reinsert,
    RestoreOutputs,
    cell_left,
    notebook_bytes,
    plain_cell,
    plan_cells,
    take_cells,
)

OUT = {"output_type": "stream", "name": "stdout", "text": ["1\n", "2\n"]}
OUT_JOINED = {"output_type": "stream", "name": "stdout", "text": "1\n2\n"}


def code(cell_id: str, source: str | list[str], *, outputs: list[Any] | None = None,
         count: int | None = None, **metadata: Any) -> dict[str, Any]:
    return {"id": cell_id, "cell_type": "code", "source": source, "metadata": metadata,
            "outputs": outputs or [], "execution_count": count}


def md(cell_id: str, source: str) -> dict[str, Any]:
    return {"id": cell_id, "cell_type": "markdown", "source": source, "metadata": {}}


def nb(*cells: dict[str, Any]) -> dict[str, Any]:
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


MARK = {"mercury": {"task": "t1", "step": 2}}
H = md("h", "# Title")
A = code("a", "x = 1", outputs=[OUT], count=1)
B = code("b", "y = 2")


@pytest.mark.parametrize(
    ("after", "before", "expected"),
    [
        pytest.param(nb(H, A), nb(H, A), (), id="nothing changed"),
        pytest.param(nb(H, code("a", "x = 2", **MARK), B), nb(H, A, B), (
            EditBack("a", 2, source_sha("x = 2"), "x = 1", {}),
            RestoreOutputs("a", 2, source_sha("x = 1"), [OUT_JOINED], 1, None)),
            id="edited: source and mark back, then its outputs"),
        pytest.param(nb(H, code("a", "x = 1", outputs=[], count=None), B), nb(H, A, B), (
            RestoreOutputs("a", 2, source_sha("x = 1"), [OUT_JOINED], 1, None),),
            id="outputs only (a run)"),
        pytest.param(nb(H, code("a", "x = 1", outputs=[OUT_JOINED], count=1)), nb(H, A), (),
                     id="the same outputs, lines split or not"),
        pytest.param(nb(H, md("n", "new"), A), nb(H, A), (
            DeleteInserted("n", 2, source_sha("new")),), id="inserted: deleted"),
        pytest.param(nb(A), nb(H, A, B), (
            Reinsert("h", 1, None, 0, md("h", "# Title")),
            Reinsert("b", 3, "a", 2, code("b", "y = 2"))),
            id="deleted at the top and the end: back in place"),
        pytest.param(nb(H, code("c", ["p", "q"])), nb(H, code("a", ["x", " = 1"])), (
            DeleteInserted("c", 2, source_sha("pq")),
            Reinsert("a", 2, "h", 1, code("a", "x = 1"))),
            id="multi-line sources joined"),
        pytest.param(nb(H, md("a", "x = 1")), nb(H, A), None, id="type changed: disk"),
        pytest.param(nb(H, {**A, "id": None}), nb(H, A), None, id="a cell without id: disk"),
        pytest.param(nb(H, A, A), nb(H, A), None, id="an id twice: disk"),
        pytest.param({"cells": "x"}, nb(H), None, id="not a notebook: disk"),
    ],
)
def test_plan_cells(after: Any, before: Any, expected: tuple[CellOp, ...] | None) -> None:
    assert plan_cells(after, before) == expected


EDIT = EditBack("a", 3, "s", "x", {})
DELETE = DeleteInserted("n", 2, "s")
INSERT = Reinsert("d", 4, "a", 3, md("d", "z"))
OUTPUTS = RestoreOutputs("a", 3, "s", [], 1, None)
CHANGED = "left as is: nb.ipynb cell {n} changed after the task (yours?)"


@pytest.mark.parametrize(
    ("op", "answer", "why"),
    [
        (EDIT, "applied", None),
        (EDIT, "refused", CHANGED.format(n=3)),
        (EDIT, "gone", "left as is: nb.ipynb cell 3 is no longer in the notebook"),
        (EDIT, "no-answer", "left as is: nb.ipynb cell 3: JupyterLab did not answer"),
        (DELETE, "refused", CHANGED.format(n=2)),
        (DELETE, "gone", None),  # deleted already: as before the task
        (INSERT, "refused", None),  # there again (the user's Ctrl+Z)
        (INSERT, "no-answer", "left as is: nb.ipynb cell 4: JupyterLab did not answer"),
        (OUTPUTS, "skipped",
         "left as is: the outputs of nb.ipynb cell 3 changed after the task (yours?)"),
        (OUTPUTS, "applied", None),
    ],
)
def test_cell_left(op: CellOp, answer: Answer, why: str | None) -> None:
    assert cell_left("nb.ipynb", op, answer) == why


@pytest.mark.parametrize(
    ("base", "source", "ids", "expected"),
    [
        pytest.param(nb(H, A, B), nb(H, code("a", "x = 2"), B), {"a"},
                     nb(H, code("a", "x = 2"), B), id="replaced"),
        pytest.param(nb(H, B), nb(H, A, B), {"a"}, nb(H, A, B), id="inserted after its anchor"),
        pytest.param(nb(B), nb(H, A, B), {"a"}, nb(A, B), id="its anchor gone: at the top"),
        pytest.param(nb(H, A, B), nb(H, B), {"a"}, nb(H, B), id="removed"),
        pytest.param(nb(H, code("a", "mine"), B), nb(H, A), {"b"}, nb(H, code("a", "mine")),
                     id="others stay"),
    ],
)
def test_take_cells(base: Any, source: Any, ids: set[str], expected: Any) -> None:
    assert take_cells(base, source, frozenset(ids)) == expected


def test_plain_cell_and_file_bytes() -> None:
    assert plain_cell(code("a", ["x", "y"], outputs=[OUT])) == code("a", "xy",
                                                                    outputs=[OUT_JOINED])
    assert notebook_bytes(nb(H)).startswith(b'{\n "cells": [\n  {\n   "cell_type": "markdown"')
