"""A notebook's change cell by cell (nbdime's diff): numbering, source lines, outputs, bounds."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import nbformat
import pytest

from mercury_nb.agent.finish import build_outcome
from mercury_nb.agent.session import TaskSession
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import Failed
from mercury_nb.contract.notebook_changes import CellChange
from mercury_nb.workspace import notebook_diff
from mercury_nb.workspace.changes import ChangeReport, describe_change
from mercury_nb.workspace.notebook_diff import notebook_change, sources_digest
from mercury_nb.workspace.snapshot import state_from_bytes

v4 = nbformat.v4


def notebook(*cells: Any, **metadata: Any) -> Any:
    nb = v4.new_notebook()
    nb.cells = list(cells)
    nb.metadata.update(metadata)
    return nb


def code(source: str, *outputs: Any, count: int | None = None) -> Any:
    cell = v4.new_code_cell(source, outputs=list(outputs), execution_count=count)
    cell.id = hashlib.sha256(source.encode()).hexdigest()[:8]  # stable ids: no id diffs
    return cell


def markdown(source: str) -> Any:
    cell = v4.new_markdown_cell(source)
    cell.id = hashlib.sha256(source.encode()).hexdigest()[:8]
    return cell


def stream(text: str) -> Any:
    return v4.new_output("stream", name="stdout", text=text)


def cells_of(before: Any, after: Any) -> list[CellChange]:
    found = notebook_change("a.ipynb", nbformat.writes(before), nbformat.writes(after))
    assert found is not None
    return found.cells


def lines(cell: CellChange) -> list[str]:
    return [line.op + line.text for line in cell.source]


EDITED = [" x = 1", "-y = 2", "+y = 3", " print(x)"]
BASE = notebook(markdown("# Title"), code("x = 1\ny = 2\nprint(x)"), code("old = True"))


def _edit(nb: Any) -> Any:
    nb.cells[1].source = "x = 1\ny = 3\nprint(x)"
    return nb


def _insert(nb: Any) -> Any:
    nb.cells.insert(1, code("import os"))
    return nb


def _remove(nb: Any) -> Any:
    del nb.cells[2]
    return nb


def _run(nb: Any) -> Any:
    nb.cells[1].outputs = [stream("1\n")]
    nb.cells[1].execution_count = 1
    return nb


def _count_only(nb: Any) -> Any:
    nb.cells[1].execution_count = 7
    return nb


def _language_info(nb: Any) -> Any:
    nb.metadata["language_info"] = {"name": "python", "version": "3.11"}
    return nb


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(_edit, [("modified", 2, None, EDITED, "")], id="one-line-edited"),
        pytest.param(_insert, [("added", 2, None, ["+import os"], "")], id="cell-added"),
        pytest.param(_remove, [("removed", 3, None, ["-old = True"], "")], id="cell-removed"),
        pytest.param(lambda nb: _insert(_edit(nb)),
                     [("added", 2, None, ["+import os"], ""),
                      ("modified", 3, 2, EDITED, "")],
                     id="edited-cell-after-an-insert-has-its-new-and-old-place"),
        pytest.param(_run, [("modified", 2, None, [], 'outputs: 0 → 1: stream "1"')],
                     id="outputs-only-summarised"),
        pytest.param(_count_only, [], id="execution-count-only-is-no-change"),
        pytest.param(_language_info, [], id="kernel-metadata-only-is-no-cell-change"),
    ],
)
def test_cells_are_numbered_and_diffed(
    change: Callable[[Any], Any],
    expected: list[tuple[str, int, int | None, list[str], str]],
) -> None:
    after = change(nbformat.from_dict(BASE))
    found = cells_of(BASE, after)
    assert [(c.kind, c.number, c.number_before, lines(c), c.outputs) for c in found] == expected


def test_kernel_metadata_changes_the_notebook_metadata_but_not_its_sources() -> None:
    found = notebook_change("a.ipynb", nbformat.writes(BASE),
                            nbformat.writes(_run(_language_info(nbformat.from_dict(BASE)))))
    assert found is not None
    assert found.metadata_changed
    assert found.sources_before == found.sources_after
    edited = notebook_change("a.ipynb", nbformat.writes(BASE),
                             nbformat.writes(_edit(nbformat.from_dict(BASE))))
    assert edited is not None and not edited.metadata_changed
    assert edited.sources_before != edited.sources_after


def test_the_digest_is_sha256_of_the_compact_json_the_panel_builds() -> None:
    # the panel hashes JSON.stringify([[cell_type, source], ...]) of the open notebook
    cells = [code("print('é')\n\tx"), markdown('say "hi"')]
    text = '[["code","print(\'é\')\\n\\tx"],["markdown","say \\"hi\\""]]'
    assert sources_digest(cells) == hashlib.sha256(text.encode()).hexdigest()
    listed = [{"cell_type": "code", "source": ["print('é')\n", "\tx"]},
              {"cell_type": "markdown", "source": 'say "hi"'}]
    assert sources_digest(listed) == sources_digest(cells)


def test_far_unchanged_lines_become_one_gap() -> None:
    body = "\n".join(f"line{i}" for i in range(20))
    after = body.replace("line10", "LINE10")
    (cell,) = cells_of(notebook(code(body)), notebook(code(after)))
    assert lines(cell) == ["…8 unchanged line(s)", " line8", " line9", "-line10", "+LINE10",
                           " line11", " line12", "…7 unchanged line(s)"]


def test_a_created_notebook_shows_every_cell_added() -> None:
    found = notebook_change("new.ipynb", None, nbformat.writes(BASE))
    assert found is not None
    assert [(c.kind, c.number, c.cell_type) for c in found.cells] == [
        ("added", 1, "markdown"), ("added", 2, "code"), ("added", 3, "code")]


def test_cells_and_lines_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    many = notebook(*(code(f"cell_{i} = {i}") for i in range(notebook_diff.MAX_CELLS + 15)))
    found = notebook_change("a.ipynb", nbformat.writes(notebook()), nbformat.writes(many))
    assert found is not None
    assert len(found.cells) == notebook_diff.MAX_CELLS and found.more_cells == 15
    long = "\n".join(f"v{i} = {i}" for i in range(notebook_diff.MAX_LINES_PER_CELL + 40))
    (cell,) = cells_of(notebook(), notebook(code(long)))
    assert len(cell.source) == notebook_diff.MAX_LINES_PER_CELL and cell.source_more == 40
    wide = "x = '" + "a" * 1000 + "'"
    (cell,) = cells_of(notebook(), notebook(code(wide)))
    assert len(cell.source[0].text) == notebook_diff.LINE_CHARS
    monkeypatch.setattr(notebook_diff, "MAX_LINES", 50)
    found = notebook_change("a.ipynb", nbformat.writes(notebook()),
                            nbformat.writes(notebook(code(long), code(long + "\n"))))
    assert found is not None
    assert sum(len(c.source) for c in found.cells) == 50 and found.more_cells == 1


def test_outputs_are_summarised_never_copied() -> None:
    image = v4.new_output("display_data", data={"image/png": "iVBORw0KGgo" * 500,
                                                "text/plain": "<Figure>"})
    error = v4.new_output("error", ename="ValueError", evalue="bad", traceback=["tb"] * 50)
    (cell,) = cells_of(notebook(code("plot()")), notebook(code("plot()", image, error)))
    assert cell.outputs == 'outputs: 0 → 2: display_data "<Figure>", error "ValueError: bad"'


@pytest.mark.parametrize(("path", "text"), [("a.json", nbformat.writes(BASE)),
                                            ("a.ipynb", "{not json"),
                                            ("a.ipynb", '{"cells": 3}')])
def test_no_cell_diff_for_what_is_not_a_notebook(path: str, text: str) -> None:
    assert notebook_change(path, nbformat.writes(BASE), text) is None


def test_a_changed_notebook_previews_cells_not_json_lines() -> None:
    before = state_from_bytes(nbformat.writes(BASE).encode(), keep_text=True)
    after = state_from_bytes(nbformat.writes(_edit(nbformat.from_dict(BASE))).encode(),
                             keep_text=True)
    change = describe_change("nb/a.ipynb", before, after)
    assert change is not None and change.notebook is not None
    assert change.preview == "cell 2 modified (code): -y = 2"
    assert '"source"' not in change.preview


def test_a_secret_in_a_cell_is_masked_in_the_outcome() -> None:
    secret = "sk-test-9f8e7d6c5b4a39281706"
    config = MercuryConfig(api_key=secret)
    before = state_from_bytes(nbformat.writes(BASE).encode(), keep_text=True)
    leaked = nbformat.from_dict(BASE)
    leaked.cells[1].source = f"key = '{secret}'"
    leaked.cells[1].outputs = [stream(f"{secret}\n")]
    after = state_from_bytes(nbformat.writes(leaked).encode(), keep_text=True)
    change = describe_change("a.ipynb", before, after)
    assert change is not None and change.notebook is not None
    assert secret in change.notebook.model_dump_json()  # measured as it is on disk
    session = TaskSession.start("task", config)
    outcome = build_outcome(session, Failed("stopped"),
                            ChangeReport(changes=[change], verified_by="snapshot"))
    (shown,) = outcome.changes
    assert shown.notebook is not None and shown.notebook.cells
    assert secret not in shown.model_dump_json()


def test_a_cell_the_agent_wrote_names_its_id_and_task() -> None:
    """The panel's detail links to the cells its task wrote: their ids and metadata.mercury."""
    edited, added = code("x = 1\ny = 3\nprint(x)"), code("plot(sales)")
    edited.id = BASE.cells[1].id
    edited.metadata["mercury"] = {"task": "t-42", "step": 2}
    added.metadata["mercury"] = {"task": "t-42", "step": 3}
    user = code("mine = 1")
    after = notebook(BASE.cells[0], edited, BASE.cells[2], added, user)
    cells = cells_of(BASE, after)
    assert [(c.kind, c.number, c.cell_id, c.task) for c in cells] == [
        ("modified", 2, edited.id, "t-42"), ("added", 4, added.id, "t-42"),
        ("added", 5, user.id, "")]
    (removed,) = cells_of(BASE, notebook(BASE.cells[0], BASE.cells[1]))
    assert (removed.kind, removed.cell_id, removed.task) == ("removed", "", "")
