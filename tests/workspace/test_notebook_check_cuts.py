"""The notebook check's failure detail is redacted before its cut (issue 18, item 5): a key
in a failing cell's error, across the detail's cut, is masked whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mercury_nb.workspace.notebook_check import DETAIL_CHARS, execute_notebook

KEY = "sk-Zq9XwYvUtS8rQpOnMlK7jIhGfEdCbA6zyxwvut"
PREFIX = "cell 0: ValueError: "


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
