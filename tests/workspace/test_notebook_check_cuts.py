"""The notebook check's failure detail and a notebook change's source lines are redacted
before their cut (issue 18, item 5): a key across the cut is masked whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mercury_nb.workspace.notebook_check import DETAIL_CHARS, execute_notebook
from mercury_nb.workspace.notebook_diff import LINE_CHARS, notebook_change

KEY = "sk-Zq9XwYvUtS8rQpOnMlK7jIhGfEdCbA6zyxwvut"
PREFIX = "cell 1: ValueError: "  # the first cell, counted from 1


@pytest.mark.parametrize("at", [7, 12])
def test_a_key_across_the_detail_cut_is_masked_whole(tmp_path: Path, at: int) -> None:
    filler = "x" * (DETAIL_CHARS - len(PREFIX) - at - 1)
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "source": f"raise ValueError({filler + ' ' + KEY + ' tail'!r})"}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook))
    run = execute_notebook(path, 60.0, "nb.ipynb")
    assert not run.ok
    assert run.detail.startswith(PREFIX + "xxx"), run.detail
    assert len(run.detail) <= DETAIL_CHARS
    body = KEY.removeprefix("sk-")
    assert not [body[i:i + 3] for i in range(len(body) - 2) if body[i:i + 3] in run.detail]


@pytest.mark.parametrize("at", [4, 7, 12])
def test_a_key_across_a_cut_source_line_of_a_notebook_change_is_masked(at: int) -> None:
    line = "x" * (LINE_CHARS - at - 1) + " " + KEY + " tail"
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "id": "c1", "source": line}
    after = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    found = notebook_change("a.ipynb", None, after)
    assert found is not None
    (shown,) = [source.text for change in found.cells for source in change.source]
    assert len(shown) <= LINE_CHARS and shown.endswith("…")
    body = KEY.removeprefix("sk-")
    assert not [body[i:i + 3] for i in range(len(body) - 2) if body[i:i + 3] in shown]
