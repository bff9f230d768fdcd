"""Executes a changed notebook top to bottom in a fresh kernel, as completion evidence."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.verification_run import VERIFICATION_RUN_ENV
from mercury_nb.workspace.confinement import Workspace
from mercury_nb.workspace.errors import WorkspaceError
from mercury_nb.workspace.reading import read_bounded, refusal

DEFAULT_MAX_BYTES: int = MercuryConfig.model_fields["file_read_max_bytes"].default
"""The most bytes of a notebook read when the caller gives no budget (the config's default)."""


@dataclass(frozen=True)
class NotebookRun:
    """How a notebook execution went. ``ok`` only when every cell ran without error."""

    path: str
    ok: bool
    detail: str


def verification_kernel_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of the kernel that re-runs a notebook as evidence: ``environ`` with
    the verification mark set, so no ``%%mercury`` cell in the notebook starts an agent."""
    return {**environ, VERIFICATION_RUN_ENV: "1"}


def execute_notebook(path: Path, timeout_s: float, display: str, *, root: Path | None = None,
                     max_bytes: int = DEFAULT_MAX_BYTES) -> NotebookRun:
    """Run ``path`` with nbclient in its own folder; the file on disk is not rewritten. The
    kernel carries the verification mark (:func:`verification_kernel_env`).

    The notebook is read through :func:`mercury_nb.workspace.reading.read_bounded` below
    ``root`` (default: its folder): a link is followed only to a target inside ``root``, a
    FIFO or device is refused before a byte is read, and so is a notebook over ``max_bytes``.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    try:
        ws = Workspace(root if root is not None else path.parent)
        path = ws.resolve(str(path))
        text = read_bounded(ws.root, path, max_bytes).decode("utf-8")
    except OSError as error:
        return NotebookRun(display, False, f"could not read the notebook: {refusal(error)}")
    except (WorkspaceError, UnicodeDecodeError) as error:
        return NotebookRun(display, False, f"could not read the notebook: {error}"[:500])
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as error:  # an invalid notebook is a failed check
        return NotebookRun(display, False, f"could not read the notebook: {error}"[:500])
    client = NotebookClient(
        nb,
        timeout=timeout_s,
        kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
        resources={"metadata": {"path": str(path.parent)}},
        allow_errors=False,
    )
    try:
        client.execute(env=verification_kernel_env(os.environ))  # the kernel's env, not ours
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
    """``python -m mercury_nb.workspace.notebook_check PATH TIMEOUT_S DISPLAY [ROOT
    MAX_BYTES]``: run it and print the :class:`NotebookRun` as one JSON line (the agent runs
    the check in a child process it can kill, kernel and all)."""
    import json

    path, timeout_s, display, *bounds = argv
    root, max_bytes = (Path(bounds[0]), int(bounds[1])) if bounds else (None, DEFAULT_MAX_BYTES)
    run = execute_notebook(Path(path), float(timeout_s), display, root=root,
                           max_bytes=max_bytes)
    print(json.dumps({"ok": run.ok, "detail": run.detail}), flush=True)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
