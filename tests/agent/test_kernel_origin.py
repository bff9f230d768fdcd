"""The first request says where a task from a cell was asked: the notebook (relative to the
workspace when inside it) and the asking cell's id, which insert_notebook_cell takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from mercury_nb.agent.kernel_context import Attachments, first_request_text, origin_text
from mercury_nb.tools.kernel_access import CellOrigin, NamespaceKernel


def kernel(notebook: str | None, cell: str | None) -> NamespaceKernel:
    return NamespaceKernel(asked_from=CellOrigin(notebook, cell))


def test_a_notebook_inside_the_workspace_is_named_relative_to_it(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "analysis.ipynb").write_text("{}")
    text = origin_text(kernel(str(tmp_path / "sub" / "analysis.ipynb"), "c-1"), tmp_path)
    assert text == ('This task was asked from the %%mercury cell with id c-1 of the notebook '
                    'sub/analysis.ipynb: "this notebook" is that notebook, and "below this '
                    'cell" is insert_notebook_cell with after_cell_id="c-1".')


@pytest.mark.parametrize(
    ("notebook", "cell", "expected"),
    [
        pytest.param(None, "c-1", "", id="no-notebook"),
        pytest.param("/elsewhere/x.ipynb", None,
                     "This task was asked from a cell of the notebook /elsewhere/x.ipynb.",
                     id="outside-and-no-cell"),
        pytest.param("work/x.ipynb", None,
                     "This task was asked from a cell of the notebook work/x.ipynb.",
                     id="a-server-relative-name-stays-as-is"),
    ],
)
def test_origin_text(tmp_path: Path, notebook: str | None, cell: str | None,
                     expected: str) -> None:
    assert origin_text(kernel(notebook, cell), tmp_path) == expected


def test_no_kernel_no_origin_and_the_first_request_places_it_after_the_task(
        tmp_path: Path) -> None:
    assert origin_text(None, tmp_path) == ""
    assert first_request_text("plot it", Attachments(), "Asked from x.") == (
        "plot it\n\nAsked from x.")
    assert first_request_text("plot it", Attachments()) == "plot it"
