"""Executes a changed notebook top to bottom in a fresh kernel, as completion evidence."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.redaction import known_secrets
from mercury_nb.contract.text_cut import clip
from mercury_nb.workspace.confinement import Workspace
from mercury_nb.workspace.errors import WorkspaceError
from mercury_nb.workspace.notebook_cells import execute_cells, failure_words
from mercury_nb.workspace.reading import read_bounded, refusal

DEFAULT_MAX_BYTES: int = MercuryConfig.model_fields["file_read_max_bytes"].default
"""The most bytes of a notebook read when the caller gives no budget (the config's default)."""

DETAIL_CHARS = 500
"""The longest detail of a failed run (an error's words), redacted before it is cut."""


def _detail(text: str) -> str:
    return clip(text, DETAIL_CHARS, known_secrets(None, os.environ))


@dataclass(frozen=True)
class NotebookRun:
    """How a notebook execution went. ``ok`` only when every cell ran without error."""

    path: str
    ok: bool
    detail: str


def execute_notebook(path: Path, timeout_s: float, display: str, *, root: Path | None = None,
                     max_bytes: int = DEFAULT_MAX_BYTES) -> NotebookRun:
    """Run ``path`` with nbclient in its own folder; the file on disk is not rewritten. The
    kernel carries the verification mark (:func:`~mercury_nb.workspace.notebook_cells.
    verification_kernel_env`).

    The notebook is read through :func:`mercury_nb.workspace.reading.read_bounded` below
    ``root`` (default: its folder): a link is followed only to a target inside ``root``, a
    FIFO or device is refused before a byte is read, and so is a notebook over ``max_bytes``.
    """
    import nbformat

    try:
        ws = Workspace(root if root is not None else path.parent)
        path = ws.resolve(str(path))
        text = read_bounded(ws.root, path, max_bytes).decode("utf-8")
    except OSError as error:
        return NotebookRun(display, False, f"could not read the notebook: {refusal(error)}")
    except (WorkspaceError, UnicodeDecodeError) as error:
        return NotebookRun(display, False, _detail(f"could not read the notebook: {error}"))
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as error:  # an invalid notebook is a failed check
        return NotebookRun(display, False, _detail(f"could not read the notebook: {error}"))
    failures: list[str] = []

    def failed(event: dict[str, Any]) -> None:
        done = event.get("cell")
        if done is not None and done.get("failure"):
            failures.append(failure_words(int(done["index"]) + 1, done["failure"]))

    try:
        execute_cells(nb, range(len(nb.cells)), path.parent, timeout_s, math.inf, failed)
    except Exception as error:
        return NotebookRun(display, False, _detail(f"{type(error).__name__}: {error}"))
    if failures:
        return NotebookRun(display, False, _detail(failures[0]))
    return NotebookRun(display, True, f"{len(nb.cells)} cells ran without error")


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
