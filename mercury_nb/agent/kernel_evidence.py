"""The task's kernel runs of notebook cells and the cells it changed, for the notebook gate."""

from __future__ import annotations

from collections.abc import Sequence

from mercury_nb.agent.session import TaskSession
from mercury_nb.contract.gate.kernel_cells import EditedCells, KernelCellRun


def kernel_runs(session: TaskSession) -> list[KernelCellRun]:
    """Every run_cells_in_kernel call that ran cells, in order."""
    return [
        KernelCellRun(path=e.kernel_run, cell_ids=e.kernel_cells, numbers=e.kernel_numbers,
                      seq=e.seq, failure=e.cell_error)
        for e in session.tool_log
        if e.kernel_run is not None and e.kernel_cells
    ]


def edited_cells(session: TaskSession, notebooks: Sequence[str]) -> EditedCells:
    """Per changed notebook, the ids of the cells the agent's cell tools wrote; None when a
    call without cell ids changed it too (a file tool, a command), or no call says it did
    (something else changed it). A run_cells call only wrote the outputs of its own run."""
    edited: dict[str, set[str] | None] = {}
    for entry in session.tool_log:
        if not entry.mutating or entry.notebook_ran or entry.kernel_run is not None:
            continue
        for path in entry.changed_paths:
            if path not in notebooks:
                continue
            known = edited.setdefault(path, set())
            if known is None or not entry.changed_cells:
                edited[path] = None
                continue
            known.update(entry.changed_cells)
    return {path: (None if (ids := edited.get(path)) is None else frozenset(ids))
            for path in notebooks}
