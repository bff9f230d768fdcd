"""Executes chosen cells of a notebook in a fresh kernel, one by one, reporting each as it ends.

The child process of ``run_cells`` (``python -m mercury_nb.workspace.notebook_cells``): it
prints one JSON line when a cell starts (``{"start": index, "at": k, "of": n}``), one with the
cell's result when it ends (``{"cell": {...}}``: its outputs whole, as the notebook stores
them, and its error), and stops at the first cell that fails. The kernel carries the
verification mark (no ``%%mercury`` cell starts an agent) and has no stdin: a cell that asks
for input fails at once (``input``), never waits. A cell over its timeout is ``timeout``, a
kernel that exits is ``died``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mercury_nb.contract.redaction import known_secrets
from mercury_nb.contract.text_cut import clip
from mercury_nb.contract.verification_run import VERIFICATION_RUN_ENV
from mercury_nb.workspace.confinement import Workspace
from mercury_nb.workspace.errors import WorkspaceError
from mercury_nb.workspace.reading import read_bounded, refusal

if TYPE_CHECKING:
    from nbformat import NotebookNode

ErrorKind = Literal["error", "input", "timeout", "died", "unreadable"]
"""How a cell (or the run) failed: it raised, it asked for input, it ran over its time, the
kernel exited under it, or the notebook could not be read."""

INPUT_ERRORS = frozenset({"StdinNotImplementedError"})
"""The exception IPython raises in a cell that asks for input when no front end answers."""

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def verification_kernel_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of a kernel that runs a notebook's cells for the agent: ``environ``
    with the verification mark set, so no ``%%mercury`` cell in the notebook starts an agent."""
    return {**environ, VERIFICATION_RUN_ENV: "1"}


def failure_words(index: int, failure: Mapping[str, Any]) -> str:
    """The failing cell and its error's last line (``cell 6: ZeroDivisionError: division by
    zero``); ``index``: the cell's place counted from 1 for the user (the gate's blocker, the
    banner, as the change summary counts cells), or from 0 in a result for the model (as
    read_notebook numbers cells)."""
    match failure.get("kind"):
        case "input":
            return f"cell {index}: waits for input (input()), which a fresh-kernel run cannot give"
        case "timeout":
            which = "the run's total time limit" if failure.get("total") else "its time limit"
            return f"cell {index}: ran over {which} ({failure.get('line')} s)"
        case "died":
            return f"cell {index}: the kernel died while it ran"
        case _:
            return f"cell {index}: {failure.get('line', '')}"


def strip_ansi(text: str) -> str:
    """``text`` without terminal colour codes (a traceback as IPython colours it)."""
    return _ANSI.sub("", text)


def last_error_line(output: dict[str, Any]) -> str:
    """The last non-empty line of an error output's traceback, without colour codes (its
    ``ename: evalue`` when there is no traceback)."""
    lines = [strip_ansi(str(line)) for line in output.get("traceback") or ()]
    text = [row.strip() for line in lines for row in line.splitlines() if row.strip()]
    if text:
        return text[-1]
    return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".rstrip(": ")


def cell_failure(outputs: Sequence[dict[str, Any]]) -> dict[str, str] | None:
    """The error of a cell's outputs (``kind``, ``ename``, ``line``), or None when it has none."""
    for output in outputs:
        if output.get("output_type") == "error":
            ename = str(output.get("ename", ""))
            kind = "input" if ename in INPUT_ERRORS else "error"
            return {"kind": kind, "ename": ename, "line": last_error_line(output)}
    return None


def load_cells_notebook(path: Path, root: Path, max_bytes: int) -> NotebookNode:
    """The notebook at ``path`` read within ``max_bytes`` through no link leaving ``root``."""
    import nbformat

    ws = Workspace(root)
    text = read_bounded(ws.root, ws.resolve(str(path)), max_bytes).decode("utf-8")
    node: NotebookNode = nbformat.reads(text, as_version=4)
    return node


def execute_cells(nb: NotebookNode, indices: Sequence[int], folder: Path, cell_timeout_s: float,
              total_timeout_s: float, emit: Callable[[dict[str, Any]], None],
              clock: Callable[[], float] = time.monotonic) -> None:
    """Run the code cells ``indices`` of ``nb`` in order in one fresh kernel started in
    ``folder``, emitting each start and result; the first failure ends the run. Each cell
    gets ``cell_timeout_s``, within what is left of ``total_timeout_s``."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    code = [i for i in indices if nb.cells[i].cell_type == "code"]
    client = NotebookClient(
        nb, timeout=cell_timeout_s, allow_errors=True, allow_stdin=False,
        kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
        resources={"metadata": {"path": str(folder)}},
    )
    deadline = clock() + total_timeout_s
    with client.setup_kernel(env=verification_kernel_env(os.environ)):
        for at, index in enumerate(code, start=1):
            cell = nb.cells[index]
            left = deadline - clock()
            overall = left < cell_timeout_s
            client.timeout = max(1, int(min(cell_timeout_s, left) + 0.999))
            emit({"start": index, "at": at, "of": len(code)})
            started = clock()
            failure: dict[str, Any] | None
            try:
                client.execute_cell(cell, index, execution_count=at)
                tags = cell.get("metadata", {}).get("tags", [])
                failure = None if "raises-exception" in tags else cell_failure(
                    cell.get("outputs", []))
            except CellTimeoutError:
                limit = total_timeout_s if overall else cell_timeout_s
                failure = {"kind": "timeout", "ename": "", "line": f"{limit:g}",
                           "total": overall}
            except DeadKernelError as error:
                failure = {"kind": "died", "ename": "", "line": _said(str(error))}
            emit({"cell": {"index": index, "source": _source(cell),
                           "outputs": list(cell.get("outputs", [])),
                           "execution_count": cell.get("execution_count"),
                           "seconds": round(clock() - started, 3), "failure": failure}})
            if failure is not None:
                return


SAID_CHARS = 300
"""The longest error text an event carries, redacted before it is cut."""


def _said(text: str) -> str:
    return clip(text, SAID_CHARS, known_secrets(None, os.environ))


def _source(cell: NotebookNode) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def main(argv: list[str]) -> None:
    """``python -m mercury_nb.workspace.notebook_cells PATH ROOT MAX_BYTES CELL_S TOTAL_S
    INDICES_JSON``: run them, one JSON line per event on stdout."""
    path, root, max_bytes, cell_s, total_s, indices = argv

    def emit(event: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()

    try:
        nb = load_cells_notebook(Path(path), Path(root), int(max_bytes))
    except OSError as error:
        emit({"unreadable": refusal(error)})
        return
    except (WorkspaceError, Exception) as error:  # an invalid notebook cannot run
        emit({"unreadable": _said(str(error))})
        return
    wanted = [i for i in json.loads(indices) if 0 <= i < len(nb.cells)]
    try:
        execute_cells(nb, wanted, Path(path).parent, float(cell_s), float(total_s), emit)
    except Exception as error:  # no kernel to start, a broken kernelspec
        emit({"broken": _said(f"{type(error).__name__}: {error}")})
        return
    emit({"end": True})


if __name__ == "__main__":
    main(sys.argv[1:])
