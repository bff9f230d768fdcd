"""Executes a changed notebook top to bottom in a fresh kernel, as completion evidence."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class NotebookRun:
    """How a notebook execution went. ``ok`` only when every cell ran without error."""

    path: str
    ok: bool
    detail: str


def execute_notebook(path: Path, timeout_s: float, display: str) -> NotebookRun:
    """Run ``path`` with nbclient in its own folder; the file on disk is not rewritten."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    try:
        nb = nbformat.read(str(path), as_version=4)
    except Exception as error:  # unreadable or invalid notebook is a failed check
        return NotebookRun(display, False, f"could not read the notebook: {error}"[:500])
    client = NotebookClient(
        nb,
        timeout=timeout_s,
        kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
        resources={"metadata": {"path": str(path.parent)}},
        allow_errors=False,
    )
    try:
        client.execute()
    except CellExecutionError as error:
        return NotebookRun(display, False, _first_line(str(error)))
    except CellTimeoutError:
        return NotebookRun(display, False, f"a cell ran longer than {timeout_s:g}s")
    except DeadKernelError as error:
        return NotebookRun(display, False, f"the kernel died: {error}"[:500])
    except Exception as error:
        return NotebookRun(display, False, f"{type(error).__name__}: {error}"[:500])
    return NotebookRun(display, True, f"{len(nb.cells)} cells ran without error")


def _first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    tail = [line for line in lines if "Error" in line]
    return (tail[-1] if tail else (lines[-1] if lines else "a cell raised"))[:500]


def main(argv: list[str]) -> None:
    """``python -m mercury_nb.workspace.notebook_check PATH TIMEOUT_S DISPLAY``: run it and
    print the :class:`NotebookRun` as one JSON line (the agent runs the check in a child
    process it can kill, kernel and all)."""
    import json

    path, timeout_s, display = argv
    run = execute_notebook(Path(path), float(timeout_s), display)
    print(json.dumps({"ok": run.ok, "detail": run.detail}), flush=True)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
