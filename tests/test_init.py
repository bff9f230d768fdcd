"""The package root: a light ``%load_ext mercury_nb`` and lazy public names."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import mercury_nb

LOAD_EXT_PROBE = """
import json, sys
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
ip.run_line_magic("load_ext", "mercury_nb")
heavy = ("litellm", "openai", "pydantic", "ipywidgets", "mercury_nb.agent.loop",
         "mercury_nb.transport")
print(json.dumps({
    "registered": "mercury" in ip.magics_manager.magics["cell"],
    "imported": sorted(m for m in sys.modules if m.split(".")[0] in heavy or m in heavy),
}))
"""


def test_load_ext_in_a_fresh_process_imports_no_litellm_nor_the_loop() -> None:
    done = subprocess.run([sys.executable, "-c", LOAD_EXT_PROBE], capture_output=True,
                          text=True, timeout=120, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["registered"]
    assert report["imported"] == []


def test_run_task_is_re_exported_lazily() -> None:
    from mercury_nb.runs.launch import run_task

    assert mercury_nb.run_task is run_task
    assert "run_task" in dir(mercury_nb)


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = mercury_nb.no_such_name  # type: ignore[attr-defined]


def test_version_matches_the_installed_distribution() -> None:
    from importlib.metadata import version

    assert mercury_nb.__version__ == version("mercury-nb")
