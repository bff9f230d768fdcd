"""Evidence for notebook work from the user's kernel: changed cells that then ran there.

A changed notebook is verified, as before, by a run of every cell in a fresh kernel after the
last change. The cells the agent changed count too when each of them then ran without error in
the user's kernel (``run_cells_in_kernel``) after the last change: the banner says so
(``✓ Verified: cells 4–5 ran in your kernel (not re-run from a fresh kernel)``). An error in any
run of a notebook's cells after the last change, fresh or in the kernel, is a blocker named with
the cell and the error's last line. A notebook changed other than by the cell tools (a command,
write_file) has no list of changed cells, so only a fresh run verifies it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mercury_nb.contract.cell_spans import spans
from mercury_nb.contract.gate.verification import (
    CheckFailed,
    CheckRecord,
    EvidenceVerdict,
    Verified,
)


@dataclass(frozen=True)
class KernelCellRun:
    """One run of a notebook's cells in the user's kernel. ``cell_ids`` the cells that ran
    (ids), ``numbers`` their 1-based places in the notebook; ``failure`` the failing cell and
    its error's last line (``cell 5: KeyError: 'month'``), empty when every cell ran."""

    path: str
    cell_ids: tuple[str, ...]
    numbers: tuple[int, ...]
    seq: int
    failure: str = ""


EditedCells = Mapping[str, frozenset[str] | None]
"""Per changed notebook: the ids of the cells the agent changed in it, or None when it also
changed in a way no cell id names (a command or a file tool wrote it)."""


def cells_text(numbers: Sequence[int]) -> str:
    """``cell 4`` or ``cells 4–5, 7``."""
    listed = spans(numbers)
    return f"cell {listed}" if len(set(numbers)) == 1 else f"cells {listed}"


def _after(run: KernelCellRun, last_mutation_seq: int | None) -> bool:
    return last_mutation_seq is None or run.seq >= last_mutation_seq


def _record(run: KernelCellRun, command: str, passed: bool) -> CheckRecord:
    return CheckRecord(command=command, exit_code=0 if passed else 1, seq=run.seq,
                       kind="kernel", path=run.path, failure=run.failure)


def covered_notebooks(
    runs: Sequence[KernelCellRun], edited: EditedCells, last_change_seq: int | None
) -> frozenset[str]:
    """The changed notebooks whose every agent-changed cell ran without error in the user's
    kernel after the last change (a run may be the last change itself: it ran the cells).
    Runs in several calls count together; for each cell its latest run decides."""
    covered: set[str] = set()
    for path, ids in edited.items():
        after = sorted((r for r in runs if r.path == path and _after(r, last_change_seq)),
                       key=lambda r: r.seq)
        if ids is None or not ids or not after:
            continue
        passed: dict[str, bool] = {}
        for r in after:  # a failing run's last cell is the one that failed
            for place, cell in enumerate(r.cell_ids, 1):
                passed[cell] = not (r.failure and place == len(r.cell_ids))
        if all(passed.get(cell, False) for cell in ids):
            covered.add(path)
    return frozenset(covered)


def notebook_evidence(
    fresh: EvidenceVerdict,
    runs: Sequence[KernelCellRun],
    edited: EditedCells,
    last_mutation_seq: int | None,
    last_change_seq: int | None = None,
) -> EvidenceVerdict:
    """The verdict for a task that changed notebooks, from ``fresh`` (the fresh-kernel runs'
    verdict, :func:`judge_evidence` with ``notebooks_changed``) and the kernel runs.

    A failing kernel run after the last mutation (``last_mutation_seq``: kernel runs count)
    is a blocker (``CheckFailed``), as is a failing fresh run; a fresh run that verifies
    wins; else, when every changed notebook's changed cells ran in the kernel after the last
    change of a file (``last_change_seq``; None: ``last_mutation_seq``), in one run or
    several, those runs verify; else ``fresh``."""
    after = sorted((r for r in runs if _after(r, last_mutation_seq)), key=lambda r: r.seq)
    failed = [r for r in after if r.failure]
    if failed:
        newest = failed[-1]
        return CheckFailed(_record(newest, f"run cells of {newest.path} in your kernel", False))
    if isinstance(fresh, CheckFailed | Verified) or not edited:
        return fresh
    changed_at = last_mutation_seq if last_change_seq is None else last_change_seq
    covered = covered_notebooks(runs, edited, changed_at)
    if covered != frozenset(edited):
        return fresh
    ran = sorted((r for r in runs if _after(r, changed_at)), key=lambda r: r.seq)
    paths = sorted(covered)
    parts = []
    for path in paths:
        numbers = sorted({n for r in ran if r.path == path for n in r.numbers})
        parts.append(cells_text(numbers) + ("" if len(paths) == 1 else f" of {path}"))
    return Verified(_record(ran[-1], " and ".join(parts), True))
