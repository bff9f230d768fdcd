"""The package root: a light ``%load_ext mercury_nb`` and lazy public names."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

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
    from mercury_nb.runs.runner import run_task

    assert mercury_nb.run_task is run_task
    assert "run_task" in dir(mercury_nb)


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = mercury_nb.no_such_name  # type: ignore[attr-defined]


def test_version_matches_the_installed_distribution() -> None:
    from importlib.metadata import version

    assert mercury_nb.__version__ == version("mercury-nb")


ROOT = Path(__file__).resolve().parent.parent


def _source_version() -> str:
    """The one place the version is written: the panel's ``labextension/package.json``."""
    return str(json.loads((ROOT / "labextension" / "package.json").read_text())["version"])


def test_the_version_is_written_once_in_the_panels_package_json() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"] == {"source": "nodejs",
                                                    "path": "labextension/package.json"}
    assert any(r.startswith("hatch-nodejs-version") for r in project["build-system"]["requires"])
    literal = re.compile(r"""(__version__|\bversion)\s*[:=]\s*["']\d+\.\d+""")
    written = [str(p.relative_to(ROOT)) for p in [ROOT / "pyproject.toml",
                                                 *sorted((ROOT / "mercury_nb").rglob("*.py"))]
               if literal.search(p.read_text())]
    assert written == []


def test_the_package_reports_the_version_package_json_gives() -> None:
    from importlib.metadata import version

    assert version("mercury-nb") == _source_version()
    assert mercury_nb.__version__ == _source_version()
    built = ROOT / "mercury_nb" / "labextension" / "package.json"
    if built.exists():  # the built panel (gitignored) carries the same version
        assert json.loads(built.read_text())["version"] == _source_version()


def test_install_json_ships_with_the_panel_and_names_the_pip_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shared = project["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    assert shared["install.json"] == "share/jupyter/labextensions/mercury-nb/install.json"
    assert shared["mercury_nb/labextension"] == "share/jupyter/labextensions/mercury-nb"
    install = json.loads((ROOT / "install.json").read_text())
    name = project["project"]["name"]
    assert (install["packageManager"], install["packageName"]) == ("python", name)


RUN_PATH_PROBE = """
import json, sys
import mercury_nb.agent.task, mercury_nb.runs.runner, mercury_nb.cli
heavy = ("nbformat", "nbdime", "jsonschema", "litellm")
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
"""


def test_the_run_path_imports_no_notebook_diff_machinery_until_a_notebook_changes() -> None:
    """nbformat's validator pulls in jsonschema's format checkers (~1.5 s at import): the
    per-cell diff of a changed notebook imports them when it runs, not every process."""
    done = subprocess.run([sys.executable, "-c", RUN_PATH_PROBE], capture_output=True,
                          text=True, timeout=120, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
