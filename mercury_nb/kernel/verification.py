"""The magics in a verification kernel: they start nothing, print one line, and the cell passes.

A changed notebook is re-run in a fresh kernel as completion evidence
(:mod:`mercury_nb.workspace.notebook_check`), with the mark
:data:`~mercury_nb.contract.verification_run.VERIFICATION_RUN_ENV` set for that kernel alone.
Its ``%%mercury`` cells must not start agents of their own (nested, and billed, with a real
model), nor its ``%mercury`` lines continue or stop tasks; ``%load_ext`` there touches no
ledger either.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from mercury_nb.contract.verification_run import SKIPPED_IN_VERIFICATION, in_verification_run


def verifying(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this kernel is a verification kernel (its environment carries the mark)."""
    return in_verification_run(os.environ if environ is None else environ)


def skip(shell: Any, line: str = "", wants_wait: Callable[[str], bool] | None = None) -> Any:
    """Print the one line and return what the cell expects: an awaitable for a cell magic
    whose ``line`` the ``--wait`` transformer turned into an ``await`` (the same test:
    ``wants_wait`` and a shell that awaits cells), else ``None`` (no ``Out``)."""
    from mercury_nb.kernel.wait_cells import can_await_cells

    print(SKIPPED_IN_VERIFICATION)
    if wants_wait is not None and wants_wait(line) and can_await_cells(shell):
        from mercury_nb.kernel.ledger_magics import NothingToWait

        return NothingToWait()
    return None
