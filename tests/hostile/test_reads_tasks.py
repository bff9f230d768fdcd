"""Hostile workspace, reads (issue 18.1): a task whose changed file is swapped for a link to a
FIFO, to ``/dev/zero``, to an outside file, or grown to a 2 GB sparse file, ends in bounded
time and honestly (nothing claimed as verified); the notebook check refuses the same files.

Each task runs in a child process with a memory limit and a deadline (killed with its group
after it), so a read that hangs or balloons fails the test instead of wedging the suite; the
child reports how much it read from the kernel's own count (``/proc/self/io`` ``rchar``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs /proc/<pid>/io")

READ_SLACK = 32 * 1024 * 1024
"""Bytes a bounded task may read (imports, config, the ledger, its own small files)."""
NOTEBOOK = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

CHILD_DEADLINE_S = 60.0
CHILD_MEMORY = 3 * 1024**3
"""Address-space limit of a child (inherited by the notebook check it starts): reading
/dev/zero or a 2 GB file whole fails fast instead of filling the machine."""

@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with an outside folder beside it holding a secret."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("outside secret\n")
    root = tmp_path / "ws"
    root.mkdir()
    return root


_TASK_CHILD = textwrap.dedent("""
    import asyncio, json, resource, sys
    from pathlib import Path
    limit = int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from mercury_nb.agent.task import run_new_session
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.testing import ScriptedModel, Turn, call

    def rchar():
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])

    spec = json.loads(sys.argv[1])
    turns = [Turn(tool_calls=(call("create_file", path=spec["path"], content=spec["content"]),)),
             Turn(tool_calls=(call("run_command", command=spec["swap"]),)),
             Turn(text="Done: the file is written.")]
    config = MercuryConfig(workdir=Path(spec["workdir"]), retry_base_s=0.0,
                           permissions="auto")  # the swap runs as a command, unasked
    before = rchar()
    outcome = asyncio.run(run_new_session(spec["task"], config,
                                          model=ScriptedModel(turns, on_exhausted="repeat_last")))
    print(json.dumps({"status": outcome.status, "banner": outcome.banner, "read": rchar() - before,
                      "evidence": [[e.kind, e.path, e.exit_code] for e in outcome.evidence]}))
""")


def run_child(script: str, *args: str) -> dict[str, Any]:
    """Run ``script`` in a child with a memory limit, killed (with its group) at the
    deadline; its last output line, as JSON."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args, str(CHILD_MEMORY)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True, env=dict(os.environ),
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        out, err = proc.communicate(timeout=CHILD_DEADLINE_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"the child did not end within {CHILD_DEADLINE_S:g} s (a read hung)")
    lines = out.decode(errors="replace").strip().splitlines()
    assert proc.returncode == 0 and lines, err.decode(errors="replace")[-3000:]
    result: dict[str, Any] = json.loads(lines[-1])
    return result


@pytest.fixture
def unblock_fifos(workspace: Path) -> Iterator[None]:
    """Whatever happens, a reader left blocked on the workspace's FIFO is let go."""
    yield
    pipe = workspace / "pipe"
    if pipe.exists():
        with contextlib.suppress(OSError):
            os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))


WHY = {
    "link-to-fifo": "a FIFO (named pipe), not a regular file",
    "link-to-dev-zero": "a link that leads outside the workspace",
    "link-outside": "a link that leads outside the workspace",
    "sparse-2gb": "2,147,483,648 bytes, over the 16,000,000-byte read limit",
}
"""Why each swapped file does not read back, as the pause names it."""
SWAPS = {
    "link-to-fifo": "mkfifo pipe && rm {path} && ln -s pipe {path}",
    "link-to-dev-zero": "rm {path} && ln -s /dev/zero {path}",
    "link-outside": "rm {path} && ln -s ../outside/secret.txt {path}",
    "sparse-2gb": "truncate -s 2G {path}",
}


@pytest.mark.usefixtures("unblock_fifos")
@pytest.mark.parametrize("swap", list(SWAPS))
@pytest.mark.parametrize(("task", "path", "content"), [
    ("Write notes.md with a short summary of the project", "notes.md", "# Notes\nShort.\n"),
    ("Create the notebook analysis.ipynb", "analysis.ipynb", NOTEBOOK),
])
def test_a_task_whose_changed_file_is_swapped_ends_in_bounded_time_and_honestly(
    workspace: Path, swap: str, task: str, path: str, content: str
) -> None:
    spec = {"workdir": str(workspace), "task": task, "path": path, "content": content,
            "swap": SWAPS[swap].format(path=path)}
    outcome = run_child(_TASK_CHILD, json.dumps(spec))
    assert "✓ Verified" not in outcome["banner"], outcome["banner"]
    assert outcome["status"] != "completed", outcome["banner"]
    assert [e for e in outcome["evidence"] if e[0] != "command" and e[2] == 0] == [], outcome
    assert outcome["read"] < READ_SLACK, f"the task read {outcome['read']:,} bytes"
    if path == "notes.md":  # its evidence is the read-back, which names what it refused
        assert f'I couldn\'t read back "notes.md" ({WHY[swap]})' in outcome["banner"]


_NOTEBOOK_CHILD = textwrap.dedent("""
    import json, resource, sys
    from pathlib import Path
    limit = int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from mercury_nb.workspace.notebook_check import execute_notebook

    def rchar():
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])

    before = rchar()
    run = execute_notebook(Path(sys.argv[1]), 60.0, "check.ipynb")
    print(json.dumps({"ok": run.ok, "detail": run.detail, "read": rchar() - before}))
""")


@pytest.mark.usefixtures("unblock_fifos")
@pytest.mark.parametrize(("target", "reason"), [
    ("fifo", "FIFO (named pipe), not a regular file"),
    ("dev-zero", "escapes the workspace"),
    ("outside", "escapes the workspace"),
    ("sparse-2gb", "over the 16,000,000-byte read limit"),
])
def test_the_notebook_check_reads_no_link_and_no_more_than_its_budget(
    workspace: Path, target: str, reason: str
) -> None:
    notebook = workspace / "check.ipynb"
    if target == "sparse-2gb":
        notebook.write_text(NOTEBOOK)
        os.truncate(notebook, 2 * 1024**3)  # a 2 GB sparse file: no disk used
    else:
        if target == "fifo":
            os.mkfifo(workspace / "pipe")
        pointed = {"fifo": "pipe", "dev-zero": "/dev/zero", "outside": "../outside/secret.txt"}
        notebook.symlink_to(pointed[target])
    run = run_child(_NOTEBOOK_CHILD, str(notebook))
    assert not run["ok"]
    assert reason in run["detail"], run["detail"]
    assert run["read"] < READ_SLACK, f"the notebook check read {run['read']:,} bytes"
