"""The committed tutorials carry no volatile metadata, and running one the way JupyterLab or
nbclient does changes nothing but outputs once stripped (``scripts/notebooks.py``)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("notebooks_script", ROOT / "scripts/notebooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


script = load_script()


def without_outputs(nb: dict[str, Any]) -> dict[str, Any]:
    cells = [{k: v for k, v in cell.items() if k not in ("outputs", "execution_count")}
             for cell in nb["cells"]]
    return {**nb, "cells": cells}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_committed_tutorials_are_already_stripped(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert script.dumps(script.strip(json.loads(text))) == text
    nb = json.loads(text)
    assert "widgets" not in nb["metadata"]
    assert "version" not in nb["metadata"]["language_info"]
    assert not [c for c in nb["cells"] if "execution" in c.get("metadata", {})]


def test_stripping_is_idempotent_and_keeps_tags() -> None:
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {
        "widgets": {"state": {}}, "language_info": {"name": "python", "version": "3.12.1"},
        "kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "cells": [{"cell_type": "code", "id": "a1", "source": "1", "outputs": [],
                   "execution_count": 1, "metadata": {
                       "tags": ["nbval-ignore-output"],
                       "execution": {"iopub.status.idle": "2026-01-01T00:00:00Z"}}}]}
    once = script.strip(nb)
    assert script.strip(once) == once
    assert once["cells"][0]["metadata"] == {"tags": ["nbval-ignore-output"]}
    assert once["metadata"]["language_info"] == script.LANGUAGE_INFO


@pytest.mark.kernel
def test_running_a_tutorial_leaves_no_diff_beyond_outputs(tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    source = ROOT / "notebooks" / "01-quickstart.ipynb"
    committed = json.loads(source.read_text(encoding="utf-8"))
    nb = nbformat.read(source, as_version=4)
    # like JupyterLab: the kernel's language_info, timings recorded, widget state saved
    NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=True,
                   store_widget_state=True,
                   resources={"metadata": {"path": str(source.parent)}}).execute()
    ran = json.loads(nbformat.writes(nb))
    assert ran["metadata"] != committed["metadata"]  # the run did write volatile metadata
    assert without_outputs(script.strip(ran)) == without_outputs(committed)
