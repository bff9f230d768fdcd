"""The live-edit browser tests again, in a JupyterLab with jupyter-collaboration.

There the open notebook's shared model is the collaboration model (a Y document the server
keeps and every collaborator's page shares): the page applies the agent's change to it, so
it reaches every collaborator and the server's own copy, and the page's Ctrl+Z still takes
it back. ``scripts/test.sh`` makes ``.venv-rtc`` (``.venv`` with jupyter-collaboration);
the modules run there in a child pytest, whose every Lab must serve the collaboration
routes (``MERCURY_EXPECT_RTC``, checked in ``conftest.running_lab``).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RTC_PYTHON = ROOT / ".venv-rtc" / "bin" / "python"
MODULES = ("tests/browser/test_live_edits.py", "tests/browser/test_live_fronts.py",
           "tests/browser/test_live_undo_panel.py")


def test_the_live_edit_tests_pass_with_jupyter_collaboration(tmp_path: Path) -> None:
    if not RTC_PYTHON.exists():
        pytest.skip(".venv-rtc is missing (scripts/test.sh makes it)")
    found = subprocess.run([str(RTC_PYTHON), "-c", "import jupyter_collaboration"],
                           capture_output=True, text=True, timeout=60)
    assert found.returncode == 0, f".venv-rtc lacks jupyter-collaboration: {found.stderr}"
    env = {**os.environ, "MERCURY_EXPECT_RTC": "1", "MERCURY_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [str(RTC_PYTHON), "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         "--basetemp", str(tmp_path / "runs"), *MODULES],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout, done.stdout[-2000:]
