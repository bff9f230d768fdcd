"""The notebook gate's kernel evidence: changed cells that then ran in the user's kernel."""

from __future__ import annotations

import pytest

from mercury_nb.contract.banners import check_clause, evidence_line
from mercury_nb.contract.gate.kernel_cells import (
    EditedCells,
    KernelCellRun,
    cells_text,
    covered_notebooks,
    notebook_evidence,
)
from mercury_nb.contract.gate.verification import (
    CheckFailed,
    CheckRecord,
    CheckStale,
    EvidenceVerdict,
    NoCheck,
    Verified,
)

NB = "analysis.ipynb"
FRESH_PASS = Verified(CheckRecord(f"run notebook {NB}", 0, 9, kind="notebook", path=NB))
FRESH_FAIL = CheckFailed(CheckRecord(f"run notebook {NB}", 1, 9, kind="notebook", path=NB,
                                     failure="cell 2: NameError: name 'x' is not defined"))
STALE = CheckStale(CheckRecord(f"run notebook {NB}", 0, 1, kind="notebook", path=NB))


def run(seq: int, ids: tuple[str, ...], numbers: tuple[int, ...], failure: str = "",
        path: str = NB) -> KernelCellRun:
    return KernelCellRun(path=path, cell_ids=ids, numbers=numbers, seq=seq, failure=failure)


EDITED: EditedCells = {NB: frozenset({"c4", "c5"})}

# (name, fresh verdict, kernel runs, edited cells, last mutation seq, expected verdict type,
#  expected banner or blocker clause)
CASES: list[tuple[str, EvidenceVerdict, list[KernelCellRun], EditedCells, int | None,
                  type, str]] = [
    ("both changed cells ran after the change", NoCheck(),
     [run(6, ("c4", "c5"), (4, 5))], EDITED, 5, Verified,
     "✓ Verified: cells 4–5 ran in your kernel (not re-run from a fresh kernel)"),
    ("the run is itself the last change (it ran code in the kernel)", NoCheck(),
     [run(5, ("c4", "c5"), (4, 5))], EDITED, 5, Verified,
     "✓ Verified: cells 4–5 ran in your kernel (not re-run from a fresh kernel)"),
    ("two runs cover the changed cells between them", NoCheck(),
     [run(6, ("c4",), (4,)), run(7, ("c5",), (5,))], EDITED, 5, Verified,
     "✓ Verified: cells 4–5 ran in your kernel (not re-run from a fresh kernel)"),
    ("one changed cell", NoCheck(), [run(6, ("c4",), (4,))], {NB: frozenset({"c4"})}, 5,
     Verified, "✓ Verified: cell 4 ran in your kernel (not re-run from a fresh kernel)"),
    ("only one of the two changed cells ran", NoCheck(), [run(6, ("c4",), (4,))], EDITED, 5,
     NoCheck, ""),
    ("the run came before the last change", STALE, [run(3, ("c4", "c5"), (4, 5))], EDITED, 5,
     CheckStale, ""),
    ("a run of the cells failed after the change", NoCheck(),
     [run(6, ("c4", "c5"), (4, 5), "cell 5: KeyError: 'month'")], EDITED, 5, CheckFailed,
     f"run cells of {NB} in your kernel ✗ (cell 5: KeyError: 'month')"),
    ("a failure after the change blocks though a later run passed", NoCheck(),
     [run(6, ("c5",), (5,), "cell 5: KeyError: 'month'"), run(7, ("c4", "c5"), (4, 5))],
     EDITED, 5, CheckFailed, f"run cells of {NB} in your kernel ✗ (cell 5: KeyError: 'month')"),
    ("a kernel failure blocks though the fresh run passed", FRESH_PASS,
     [run(6, ("c4",), (4,), "cell 4: ZeroDivisionError: division by zero")], EDITED, 5,
     CheckFailed,
     f"run cells of {NB} in your kernel ✗ (cell 4: ZeroDivisionError: division by zero)"),
    ("a failure before the last change is history", NoCheck(),
     [run(3, ("c4",), (4,), "cell 4: ZeroDivisionError: division by zero"),
      run(6, ("c4", "c5"), (4, 5))], EDITED, 5, Verified,
     "✓ Verified: cells 4–5 ran in your kernel (not re-run from a fresh kernel)"),
    ("a fresh run that passed wins", FRESH_PASS, [run(6, ("c4", "c5"), (4, 5))], EDITED, 5,
     Verified, f"✓ Verified: {NB} ran top to bottom in a fresh kernel"),
    ("a failing fresh run blocks though the kernel run passed", FRESH_FAIL,
     [run(6, ("c4", "c5"), (4, 5))], EDITED, 5, CheckFailed,
     f"run notebook {NB} ✗ (cell 2: NameError: name 'x' is not defined)"),
    ("a notebook a command changed needs a fresh run", NoCheck(),
     [run(6, ("c4", "c5"), (4, 5))], {NB: None}, 5, NoCheck, ""),
    ("every changed notebook must be covered", NoCheck(),
     [run(6, ("c4", "c5"), (4, 5))], {**EDITED, "other.ipynb": frozenset({"a"})}, 5,
     NoCheck, ""),
    ("two notebooks covered name each", NoCheck(),
     [run(6, ("c4", "c5"), (4, 5)), run(7, ("a",), (1,), path="b.ipynb")],
     {**EDITED, "b.ipynb": frozenset({"a"})}, 5, Verified,
     f"✓ Verified: cells 4–5 of {NB} and cell 1 of b.ipynb ran in your kernel"
     " (not re-run from a fresh kernel)"),
    ("a run of other cells verifies nothing", NoCheck(), [run(6, ("c1",), (1,))], EDITED, 5,
     NoCheck, ""),
    ("no kernel runs leave the fresh verdict", STALE, [], EDITED, 5, CheckStale, ""),
]


@pytest.mark.parametrize(("fresh", "runs", "edited", "last", "kind", "line"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_notebook_evidence(fresh: EvidenceVerdict, runs: list[KernelCellRun],
                           edited: EditedCells, last: int | None, kind: type,
                           line: str) -> None:
    verdict = notebook_evidence(fresh, runs, edited, last)
    assert type(verdict) is kind
    match verdict:
        case Verified():
            assert evidence_line(verdict) == line
        case CheckFailed(check=check):
            assert check_clause(check, stale=False) == line
        case _:
            assert verdict == fresh


@pytest.mark.parametrize(("runs", "last_mutation", "kind"), [
    pytest.param([run(6, ("c4",), (4,)), run(7, ("c5",), (5,))], 7, Verified,
                 id="two-calls-each-the-last-mutation-then"),
    pytest.param([run(6, ("c4", "c5"), (4, 5), "cell 5: KeyError: 'month'"),
                  run(8, ("c5",), (5,))], 8, Verified,
                 id="a-failure-fixed-by-setup-code-then-a-rerun"),
    pytest.param([run(6, ("c4",), (4,)), run(7, ("c5",), (5,), "cell 5: KeyError: 'month'")],
                 7, CheckFailed, id="the-latest-run-failing-blocks"),
])
def test_kernel_runs_are_not_changes_of_the_cells(runs: list[KernelCellRun],
                                                  last_mutation: int, kind: type) -> None:
    """In a task, each kernel run (and run_in_kernel) is itself the last mutation; the cells'
    last change is the last file change (seq 5): runs after it count together."""
    assert type(notebook_evidence(NoCheck(), runs, EDITED, last_mutation, 5)) is kind
    assert (covered_notebooks(runs, EDITED, 5) == {NB}) is (kind is Verified)


@pytest.mark.parametrize(("runs", "edited", "covered"), [
    ([run(6, ("c4", "c5"), (4, 5))], EDITED, {NB}),
    ([run(6, ("c4", "c5"), (4, 5), "cell 5: KeyError: 'month'")], EDITED, set()),
    ([run(4, ("c4", "c5"), (4, 5))], EDITED, set()),
    ([run(6, ("c4", "c5"), (4, 5))], {NB: None}, set()),
    ([run(6, ("c4", "c5"), (4, 5))], {NB: frozenset()}, set()),
])
def test_covered_notebooks_skip_the_fresh_run(runs: list[KernelCellRun], edited: EditedCells,
                                              covered: set[str]) -> None:
    assert covered_notebooks(runs, edited, 5) == covered


@pytest.mark.parametrize(("numbers", "text"), [
    ((4,), "cell 4"), ((4, 5), "cells 4–5"), ((5, 4, 7), "cells 4–5, 7"), ((3, 3), "cell 3")])
def test_cells_text(numbers: tuple[int, ...], text: str) -> None:
    assert cells_text(numbers) == text
