"""Entry point for ``python -m mercury_nb``: the command line, then a prompt end of the process."""

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn

from mercury_nb.cli import main

EXIT_HOOKS_S = 1.0
"""Longest the exit hooks may take (they kill what the commands left, bounded themselves)."""


def end_process(code: int) -> NoReturn:
    """End the process once the command's outcome is out: the exit hooks run (at most
    :data:`EXIT_HOOKS_S`), the output is flushed, and the interpreter's teardown is skipped:
    on a busy machine, finalising the SDKs' modules alone took seconds after a Stop, and it
    would also wait for any thread a blocked tool left behind."""
    hooks = threading.Thread(target=atexit._run_exitfuncs, name="mercury-exit-hooks",
                             daemon=True)
    hooks.start()
    hooks.join(EXIT_HOOKS_S)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    end_process(main())
