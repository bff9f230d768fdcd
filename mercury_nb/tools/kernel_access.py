"""The seam to the user's kernel: what a task from a ``%%mercury`` cell may reach of it.

A front end that runs in a kernel (the cell magic) puts a :class:`KernelAccess` into its
:class:`~mercury_nb.runs.request.RunRequest`; the runs layer hands it to the task, whose
tool context carries it to ``inspect_variables`` and ``run_in_kernel``. Without one (the
CLI, the panel, the library call) those tools are not offered. :class:`NamespaceKernel` is
the plain implementation over a dict (a library caller's namespace, the tests).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.redaction import known_secrets, namespace_secrets

DisplaySink = Callable[[Mapping[str, Any]], None]
"""Takes one display output's MIME bundle (``{"text/plain": …, "image/png": …}``)."""


@dataclass(frozen=True)
class CellOrigin:
    """Where the task was asked: the notebook of the kernel (``JPY_SESSION_NAME``, as the
    server names it) and the id of the ``%%mercury`` cell that asked (the execute request's
    ``metadata.cellId``); either is None when the front end does not say."""

    notebook: str | None = None
    cell_id: str | None = None


class KernelAccess(Protocol):
    """The user's kernel, as a task's tools see it."""

    def namespace(self) -> dict[str, Any]:
        """The user's namespace itself (``shell.user_ns``)."""
        ...

    def hidden_names(self) -> frozenset[str]:
        """The kernel's own names in it (IPython's ``In``, ``Out``, ``exit``…)."""
        ...

    def other_cell_running(self) -> bool:
        """Whether a cell other than the one that owns the task is executing now."""
        ...

    def displays_of(self, thread_id: int, sink: DisplaySink) -> AbstractContextManager[None]:
        """While open, what the thread ``thread_id`` displays goes to ``sink`` instead of
        the notebook (other threads display as usual)."""
        ...

    def origin(self) -> CellOrigin:
        """The notebook and the cell the task was asked from ("this notebook", "below this
        cell")."""
        ...

    def python_of(self, source: str) -> str:
        """A cell's source as the kernel runs it: Python, its magics (``%matplotlib
        inline``) and shell escapes (``!ls``) made calls, as IPython transforms a cell."""
        ...


@dataclass
class NamespaceKernel:
    """A :class:`KernelAccess` over a plain dict: no other cells, displays not captured."""

    values: dict[str, Any] = field(default_factory=dict)
    hidden: frozenset[str] = frozenset()
    busy: Callable[[], bool] = lambda: False
    asked_from: CellOrigin = CellOrigin()
    transform: Callable[[str], str] = lambda source: source

    def namespace(self) -> dict[str, Any]:
        return self.values

    def hidden_names(self) -> frozenset[str]:
        return self.hidden

    def other_cell_running(self) -> bool:
        return self.busy()

    def displays_of(self, thread_id: int, sink: DisplaySink) -> AbstractContextManager[None]:
        return _nothing()

    def origin(self) -> CellOrigin:
        return self.asked_from

    def python_of(self, source: str) -> str:
        return self.transform(source)


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def kernel_secrets(config: MercuryConfig, kernel: KernelAccess) -> tuple[str, ...]:
    """Every secret to mask in what the kernel's tools return: the config's and the
    environment's, and the values of the namespace's secret-named variables (``api_key``,
    ``settings["token"]``) as they are now."""
    return tuple(dict.fromkeys((*known_secrets(config, os.environ),
                                *namespace_secrets(kernel.namespace()))))
