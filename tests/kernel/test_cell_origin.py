"""Where a task was asked from: the kernel's notebook (JPY_SESSION_NAME) and the running cell's
id (the execute request's metadata.cellId, else IPython's ExecutionInfo.cell_id)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from mercury_nb.kernel.user_namespace import CellKernel, cell_origin, unfollow_cells
from mercury_nb.tools.kernel_access import CellOrigin


class Shell:
    def __init__(self, parent: Any) -> None:
        self._parent = parent
        self.user_ns: dict[str, Any] = {}

    @property
    def parent_header(self) -> Any:
        if isinstance(self._parent, Exception):
            raise self._parent
        return self._parent


@pytest.mark.parametrize(
    ("parent", "running", "environ", "origin"),
    [
        pytest.param({"metadata": {"cellId": "c-42"}}, None,
                     {"JPY_SESSION_NAME": "/home/u/work/analysis.ipynb"},
                     CellOrigin("/home/u/work/analysis.ipynb", "c-42"), id="lab"),
        pytest.param({"metadata": {}}, SimpleNamespace(cell_id="from-ipython"), {},
                     CellOrigin(None, "from-ipython"), id="execution-info"),
        pytest.param({}, None, {"JPY_SESSION_NAME": "a.ipynb"}, CellOrigin("a.ipynb", None),
                     id="no-cell-id"),
        pytest.param(AttributeError("no parent"), None, {"JPY_SESSION_NAME": ""}, CellOrigin(),
                     id="plain-ipython"),
        pytest.param({"metadata": {"cellId": 7}}, SimpleNamespace(cell_id=""), {},
                     CellOrigin(), id="not-a-string"),
    ],
)
def test_cell_origin(parent: Any, running: object, environ: dict[str, str],
                     origin: CellOrigin) -> None:
    assert cell_origin(Shell(parent), running, environ) == origin


def test_the_cell_kernel_keeps_the_origin_of_the_cell_that_asked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", "/w/nb.ipynb")
    shell = Shell({"metadata": {"cellId": "asking"}})
    kernel = CellKernel(shell)
    shell._parent = {"metadata": {"cellId": "a-later-cell"}}  # the user runs another cell
    assert kernel.origin() == CellOrigin("/w/nb.ipynb", "asking")
    unfollow_cells(shell)


def test_a_cell_kernel_gives_a_cells_source_as_ipython_runs_it() -> None:
    """run_cells_in_kernel runs a cell as the kernel would: IPython's magics and shell
    escapes become calls (raw, ``%matplotlib inline`` is a SyntaxError)."""
    import ast

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    kernel = CellKernel(shell)
    try:
        python = kernel.python_of("%matplotlib inline\n!ls\nx = 1\n")
    finally:
        unfollow_cells(shell)
    ast.parse(python)
    assert "run_line_magic('matplotlib', 'inline')" in python and "system('ls')" in python
