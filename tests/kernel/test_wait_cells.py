"""The ``--wait`` transformer's recognition of a single ``%%mercury`` call, as a table."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from mercury_nb.kernel.wait_cells import WaitCellTransformer, can_await_cells, magic_line_of


@pytest.mark.parametrize(
    ("source", "line"),
    [
        pytest.param("get_ipython().run_cell_magic('mercury', '--wait', 'x\\n')\n", "--wait",
                     id="the-mercury-call"),
        pytest.param("get_ipython().run_cell_magic('capture', '--wait', 'x\\n')\n", None,
                     id="another-magic"),
        pytest.param("get_ipython().run_cell_magic('mercury', flags, 'x')\n", None,
                     id="non-literal-line"),
        pytest.param("x = 1\nget_ipython().run_cell_magic('mercury', '--wait', 'x')\n", None,
                     id="more-than-one-statement"),
        pytest.param("r = get_ipython().run_cell_magic('mercury', '--wait', 'x')\n", None,
                     id="assignment-not-expression"),
        pytest.param("other().run_cell_magic('mercury', '--wait', 'x')\n", None,
                     id="not-get-ipython"),
        pytest.param("get_ipython().run_cell_magic('mercury', '--wait')\n", None,
                     id="wrong-arity"),
        pytest.param("get_ipython(.run_cell_magic(\n", None, id="not-python"),
    ],
)
def test_magic_line_of(source: str, line: str | None) -> None:
    assert magic_line_of(source, "mercury") == line


@pytest.mark.parametrize(
    ("autoawait", "runner", "expected"),
    [
        pytest.param(True, "asyncio", True, id="asyncio-autoawait"),
        pytest.param(False, "asyncio", False, id="autoawait-off"),
        pytest.param(True, "trio", False, id="other-runner"),
    ],
)
def test_can_await_cells(autoawait: bool, runner: str, expected: bool) -> None:
    shell = SimpleNamespace(autoawait=autoawait, loop_runner=runner)
    assert can_await_cells(shell) is expected


def test_transformer_prefixes_await_only_when_asked() -> None:
    shell = SimpleNamespace(autoawait=True, loop_runner="asyncio")
    transform = WaitCellTransformer(shell, "mercury", lambda line: "--wait" in line)
    waiting = ["get_ipython().run_cell_magic('mercury', '--wait', 'x\\n')\n"]
    background = ["get_ipython().run_cell_magic('mercury', '', 'x\\n')\n"]
    assert transform(waiting) == ["await " + waiting[0]]
    assert transform(background) is background
