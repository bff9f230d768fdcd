"""``scripts/lab.sh`` installs only when something changed and opens the quickstart under the
root it sets, and the quickstart's workspace lies inside that root (so the file browser can
open what the agent made).

The script runs for real, in a copy of its folder layout whose ``.venv/bin/python`` and
``jupyter`` are fakes that log how they were called: no install, no server.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = "notebooks/01-quickstart.ipynb"
FAKE_PYTHON = """#!/usr/bin/env bash
echo "python $*" >> "$CALLS"
[ "$1" = "-V" ] && echo "Python 3.11.2"
exit 0
"""
FAKE_JUPYTER = """#!/usr/bin/env bash
echo "jupyter $*" >> "$CALLS"
"""
FAKE_BUILD = """echo "build" >> "$CALLS"
"""


def checkout(tmp_path: Path) -> Path:
    """A copy of the layout lab.sh expects, with fake tools in .venv/bin."""
    copy = tmp_path / "checkout"
    (copy / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "lab.sh", copy / "scripts" / "lab.sh")
    (copy / "scripts" / "build_labextension.sh").write_text(FAKE_BUILD)
    for name in ("pyproject.toml", "install.json"):
        shutil.copy(ROOT / name, copy / name)
    tools = copy / ".venv" / "bin"
    tools.mkdir(parents=True)
    for name, text in (("python", FAKE_PYTHON), ("jupyter", FAKE_JUPYTER)):
        (tools / name).write_text(text)
        (tools / name).chmod(0o755)
    return copy


def launch(copy: Path, calls: Path) -> tuple[str, list[str]]:
    calls.write_text("")
    env = {**os.environ, "CALLS": str(calls)}
    done = subprocess.run(["bash", str(copy / "scripts" / "lab.sh")], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout, calls.read_text().splitlines()


def installs(calls: list[str]) -> list[str]:
    return [call for call in calls if call.startswith("python -m pip install")]


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="lab.sh hashes with sha256sum")
def test_lab_installs_once_then_only_when_the_project_changed(tmp_path: Path) -> None:
    copy, calls = checkout(tmp_path), tmp_path / "calls.log"
    out, first = launch(copy, calls)
    assert "install: installing" in out and len(installs(first)) == 2
    out, second = launch(copy, calls)
    assert "install: up to date" in out and installs(second) == []  # nothing changed
    assert "build" in second  # the panel build keeps its own stamp
    (jupyter,) = [call for call in second if call.startswith("jupyter ")]
    assert f"--ServerApp.root_dir={copy}" in jupyter.split()
    assert f"--LabApp.default_url=/lab/tree/{QUICKSTART}" in jupyter.split()
    with (copy / "pyproject.toml").open("a") as edited:
        edited.write("\n# a changed dependency\n")
    out, third = launch(copy, calls)
    assert "install: installing" in out and len(installs(third)) == 2


def test_the_quickstart_opens_under_that_root_and_its_workspace_lies_inside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert (ROOT / QUICKSTART).is_file()  # the URL lab.sh prints, under the root it sets
    nb = json.loads((ROOT / QUICKSTART).read_text(encoding="utf-8"))
    (setup,) = [cell for cell in nb["cells"] if cell["cell_type"] == "code"
                and "workspace =" in "".join(cell["source"])]
    root = tmp_path / "checkout"
    (root / "notebooks").mkdir(parents=True)
    monkeypatch.chdir(root / "notebooks")  # a kernel starts in its notebook's folder
    names: dict[str, object] = {}
    exec("".join(setup["source"]), names)
    workspace = names["workspace"]
    assert isinstance(workspace, Path) and workspace.is_dir()
    assert workspace.is_relative_to(root.resolve())
    assert workspace.parent == (root / "notebooks" / "workspaces").resolve()
