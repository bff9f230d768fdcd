"""Hostile timing on a workspace: two processes start mutating tasks in one workspace at the
same moment; exactly one runs, the other is refused ``workspace-busy``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

RACER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from mercury_nb import runs
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.runs.resolve import resolve

    folder, workspace, home, name = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    (folder / f"{name}.ready").touch()
    while not (folder / "go").exists():
        time.sleep(0.001)
    found = resolve(runs.RunRequest(task=f"Write {name}.md", report=lambda line: None,
                                    config=MercuryConfig(workdir=workspace, home=home)))
    print(getattr(found, "kind", "planned"), flush=True)
    while not (folder / "done").exists():  # stay alive: a dead owner frees the workspace
        time.sleep(0.01)
""")


def wait_for_files(paths: list[Path], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not all(path.exists() for path in paths):
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


@pytest.mark.parametrize("attempt", range(3))
def test_two_processes_starting_at_once_in_one_workspace_one_is_refused(
    tmp_path: Path, attempt: int
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    script = tmp_path / "racer.py"
    script.write_text(RACER)
    names = ["a", "b"]
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path), str(workspace),
                               str(home), name], stdout=subprocess.PIPE, text=True)
             for name in names]
    try:
        wait_for_files([tmp_path / f"{name}.ready" for name in names], "both racers")
        (tmp_path / "go").touch()
        kinds = sorted(proc.stdout.readline().strip() for proc in procs if proc.stdout)
        assert kinds == ["planned", "workspace-busy"]
    finally:
        (tmp_path / "done").touch()
        for proc in procs:
            proc.wait(timeout=30)


OPENER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from mercury_nb.ledger.store import Ledger

    folder, name = Path(sys.argv[1]), sys.argv[2]
    (folder / f"{name}.ready").touch()
    while not (folder / "go").exists():
        time.sleep(0.0005)
    try:
        Ledger(folder / "ledger.sqlite3").close()
        print("opened", flush=True)
    except Exception as error:
        print(type(error).__name__, error, flush=True)
""")


@pytest.mark.parametrize("attempt", range(8))
def test_processes_opening_a_new_ledger_at_once_all_get_it(tmp_path: Path, attempt: int) -> None:
    """The switch of a new file to WAL is answered "locked" without waiting; a start that
    lost that race ran unrecorded, outside the workspace check."""
    script = tmp_path / "opener.py"
    script.write_text(OPENER)
    names = ["a", "b", "c", "d"]
    procs = [subprocess.Popen([sys.executable, str(script), str(tmp_path), name],
                              stdout=subprocess.PIPE, text=True) for name in names]
    wait_for_files([tmp_path / f"{name}.ready" for name in names], "every opener")
    (tmp_path / "go").touch()
    results = [proc.communicate(timeout=60)[0].strip() for proc in procs]
    assert results == ["opened"] * len(names)
