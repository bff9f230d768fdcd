"""The one probe of bubblewrap: can it make the sandbox here? Asked once, a success kept.

A trivial command (``true``) runs under the sandbox's own flags. A success is remembered for
the process (keyed by the program's real path); a failure is not, so a fix (installing
bubblewrap, turning user namespaces on) is seen by the next task without a restart.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading

from mercury_nb.contract.sandbox_policy import (
    PROBE_COMMAND,
    SandboxBroken,
    SandboxMissing,
    SandboxProbe,
    SandboxReady,
    bwrap_arguments,
)

_lock = threading.Lock()
_ready: dict[str, SandboxReady] = {}
_STDERR_CHARS = 300
"""Characters of bubblewrap's complaint quoted in the refusal."""


def probe(bwrap_path: str, timeout_s: float) -> SandboxProbe:
    """Whether ``bwrap_path`` (a name on ``PATH`` or a path) makes a sandbox here."""
    found = shutil.which(bwrap_path)
    if found is None:
        return SandboxMissing(bwrap_path)
    key = os.path.realpath(found)
    with _lock:
        known = _ready.get(key)
        if known is not None:
            return known
        answer = _run_probe(found, timeout_s)
        if isinstance(answer, SandboxReady):
            _ready[key] = answer
        return answer


def forget_probe() -> None:
    """Drop the remembered successes (tests)."""
    with _lock:
        _ready.clear()


def _run_probe(bwrap: str, timeout_s: float) -> SandboxProbe:
    argv = [*bwrap_arguments(bwrap, None, network=False), *PROBE_COMMAND]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return SandboxBroken(bwrap, f"the probe did not finish in {timeout_s:g}s")
    except OSError as error:  # not executable, not a program
        return SandboxBroken(bwrap, error.strerror or str(error))
    if done.returncode == 0:
        return SandboxReady(bwrap)
    said = done.stderr.decode(errors="replace").strip()
    return SandboxBroken(bwrap, said[-_STDERR_CHARS:] or f"exit code {done.returncode}")
