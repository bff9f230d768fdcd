"""The kernel a ``%%mercury`` cell runs in, as its task sees it: the user's namespace, which
cell is executing, and displays routed away from the notebook while the agent's code runs.

:func:`follow_cells` follows IPython's ``pre_run_cell`` / ``post_run_cell`` events, so
:class:`CellKernel` can tell that a cell other than the one that started the task (a
``--wait`` cell still executing owns its task) is executing. The cell magic puts a
:class:`CellKernel` into its request (the runs layer's one door); its first one installs the
tracker from inside the cell that asks, which is then the one cell it did not see start:
the owner, so nothing is missed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import Any

from mercury_nb.tools.kernel_access import CellOrigin, DisplaySink

SESSION_NAME = "JPY_SESSION_NAME"
"""The variable Jupyter Server sets in a kernel's environment: the notebook it runs for."""

_NONE = object()


class CellTracker:
    """Which cell of a shell executes now (IPython's ExecutionInfo of it, or None)."""

    def __init__(self) -> None:
        self.current: object = None

    def pre_run_cell(self, info: object = None) -> None:
        self.current = info if info is not None else _NONE

    def post_run_cell(self, result: object = None) -> None:
        self.current = None


def follow_cells(shell: Any) -> CellTracker:
    """Follow ``shell``'s cells (once per shell; the tracker is kept on the shell)."""
    tracker = getattr(shell, "_mercury_cells", None)
    if isinstance(tracker, CellTracker):
        return tracker
    tracker = CellTracker()
    events = getattr(shell, "events", None)
    if events is None:  # a shell without IPython's events runs no other cells to follow
        return tracker
    events.register("pre_run_cell", tracker.pre_run_cell)
    events.register("post_run_cell", tracker.post_run_cell)
    shell._mercury_cells = tracker
    return tracker


def unfollow_cells(shell: Any) -> None:
    """Undo :func:`follow_cells`."""
    tracker = getattr(shell, "_mercury_cells", None)
    if not isinstance(tracker, CellTracker):
        return
    for name, callback in (("pre_run_cell", tracker.pre_run_cell),
                           ("post_run_cell", tracker.post_run_cell)):
        with suppress(ValueError):
            shell.events.unregister(name, callback)
    del shell._mercury_cells


class CellKernel:
    """The :class:`~mercury_nb.tools.kernel_access.KernelAccess` of a task started by the cell
    executing now in ``shell``."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.tracker = follow_cells(shell)
        self.owner = self.tracker.current
        self.asked_from = cell_origin(shell, self.owner, os.environ)

    def namespace(self) -> dict[str, Any]:
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    def hidden_names(self) -> frozenset[str]:
        return frozenset(getattr(self.shell, "user_ns_hidden", {}) or ())

    def other_cell_running(self) -> bool:
        current = self.tracker.current
        return current is not None and current is not self.owner

    def displays_of(self, thread_id: int, sink: DisplaySink) -> AbstractContextManager[None]:
        return _routed_displays(self.shell, thread_id, sink)

    def origin(self) -> CellOrigin:
        return self.asked_from

    def python_of(self, source: str) -> str:
        transformed: str = self.shell.transform_cell(source)
        return transformed


def cell_origin(shell: Any, running: object, environ: Mapping[str, str]) -> CellOrigin:
    """The notebook of ``environ`` (``JPY_SESSION_NAME``) and the id of the cell executing in
    ``shell`` now: its execute request's ``metadata.cellId`` (JupyterLab sends it), else the
    ``cell_id`` IPython's ExecutionInfo of ``running`` carries."""
    cell_id: object = None
    with suppress(Exception):  # a shell without a parent message (a plain IPython)
        cell_id = (shell.parent_header.get("metadata") or {}).get("cellId")
    if not isinstance(cell_id, str) or not cell_id:
        cell_id = getattr(running, "cell_id", None)
    notebook = environ.get(SESSION_NAME) or None
    return CellOrigin(notebook, cell_id if isinstance(cell_id, str) and cell_id else None)


@contextmanager
def _routed_displays(shell: Any, thread_id: int, sink: DisplaySink) -> Iterator[None]:
    """``shell.display_pub.publish`` from ``thread_id`` goes to ``sink`` while open."""
    publisher = getattr(shell, "display_pub", None)
    if publisher is None:
        yield
        return
    original = publisher.publish
    had_own = "publish" in vars(publisher)

    def publish(data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == thread_id:
            sink(dict(data or {}))
            return None
        return original(data, metadata, *args, **kwargs)

    publisher.publish = publish
    try:
        yield
    finally:
        if vars(publisher).get("publish") is publish:
            if had_own:
                publisher.publish = original
            else:
                del publisher.publish  # the class's own method again
