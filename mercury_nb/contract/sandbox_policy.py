"""The command sandbox as data: bubblewrap's arguments, the probe's answers and why a task refuses.

``--sandbox workspace-write`` wraps every command in bubblewrap (:func:`bwrap_arguments`):

* the whole filesystem bound read-only (``--ro-bind / /``), then the workspace bound
  writable on the same path, a private ``/tmp`` (``--tmpfs``), an empty ``/run`` (the host
  daemons' sockets hidden), a minimal ``/dev`` and a ``/proc`` of its own; the product's
  own Python environment, when it lies under ``/tmp`` (a virtualenv in a clone there), is
  bound read-only again over the private ``/tmp``
  (:func:`kept_through_tmp`), so ``python`` and the notebook check still start;
* every namespace unshared (``--unshare-all``: user, IPC, PID, network, UTS, cgroup), the
  network given back only with ``sandbox_network`` (``--share-net``);
* the process tree confined: a PID namespace of its own, killed with its parent
  (``--die-with-parent``), in a new session (``--new-session``: no ``TIOCSTI`` into the
  terminal), every capability dropped (``--cap-drop ALL``: even when run as root, nothing
  can be remounted writable).

Whether bubblewrap can run at all is probed once (:data:`PROBE_COMMAND` under the same
flags); a probe that did not answer :class:`SandboxReady` refuses the task before it starts
(:func:`unavailable_text`), so a command never runs unsandboxed when a sandbox was asked for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import assert_never

HIDDEN_RUN = "/run"
"""Covered by an empty tmpfs: the host's daemons listen on Unix sockets there (``/run/dbus``,
the user's session bus in ``/run/user/UID``, ``/run/docker.sock``; ``/var/run`` points
here), which a read-only bind would leave connectable from inside."""
RESOLVER_RUN = "/run/systemd/resolve"
"""Bound read-only again when the network is given back (systemd-resolved's
``resolv.conf`` lives there)."""

PROBE_COMMAND = ("true",)
"""What the probe runs in the sandbox (it needs nothing but to start)."""

SANDBOX_ENV = {"TMPDIR": "/tmp"}
"""Set for a sandboxed command: temporary files go to its private ``/tmp``."""

MISSING = ("--sandbox workspace-write needs bubblewrap, and {bwrap} was not found. Install it "
           "(Debian and Ubuntu: apt-get install bubblewrap), or name it with "
           "MERCURY_BWRAP_PATH, or run without --sandbox.")
BROKEN = ("--sandbox workspace-write: bubblewrap ({bwrap}) cannot make a sandbox here: {why}. "
          "Unprivileged user namespaces are probably off: turn them on (sysctl "
          "kernel.unprivileged_userns_clone=1 or user.max_user_namespaces=15000; on Ubuntu "
          "also kernel.apparmor_restrict_unprivileged_userns=0), or, in a container, allow "
          "them (docker run --security-opt seccomp=unconfined), or run without --sandbox.")
UNAVAILABLE = "the sandbox could not start, so the command did not run: {why}"
"""What run_command answers when the sandbox, probed fine at start, fails later."""


@dataclass(frozen=True)
class SandboxReady:
    """bubblewrap ran the probe: ``bwrap`` is the program's full path."""

    bwrap: str


@dataclass(frozen=True)
class SandboxMissing:
    """No program ``bwrap`` (a name not on ``PATH``, or a path that is not there)."""

    bwrap: str


@dataclass(frozen=True)
class SandboxBroken:
    """bubblewrap is there but could not make the sandbox; ``why``: what it said."""

    bwrap: str
    why: str


SandboxProbe = SandboxReady | SandboxMissing | SandboxBroken


def unavailable_text(probe: SandboxProbe) -> str | None:
    """Why a task asking for the sandbox cannot start, and how to fix it (None: it can)."""
    match probe:
        case SandboxReady():
            return None
        case SandboxMissing(bwrap=bwrap):
            return MISSING.format(bwrap=bwrap)
        case SandboxBroken(bwrap=bwrap, why=why):
            return BROKEN.format(bwrap=bwrap, why=why.strip() or "it failed without a message")
        case _ as unreachable:
            assert_never(unreachable)


PRIVATE_TMP = "/tmp"


def kept_through_tmp(paths: Iterable[str]) -> tuple[str, ...]:
    """Of ``paths`` (absolute, resolved), those the private ``/tmp`` would hide: strictly
    under ``/tmp``, each once, none inside another kept one (``/tmp`` itself never)."""
    under = sorted({p.rstrip("/") for p in paths if p.startswith(PRIVATE_TMP + "/")
                    and p.rstrip("/") != PRIVATE_TMP})
    kept: list[str] = []
    for path in under:
        if not any(path == k or path.startswith(k + "/") for k in kept):
            kept.append(path)
    return tuple(kept)


def bwrap_arguments(bwrap: str, workspace: str | None, *, network: bool,
                    readable: Iterable[str] = ()) -> tuple[str, ...]:
    """bubblewrap and its options, to be followed by the command's own argv (see the
    module); ``workspace`` (an absolute, resolved path) is the one writable folder (None:
    the probe, which writes nothing); ``readable``: folders bound read-only again over the
    private ``/tmp`` (:func:`kept_through_tmp` picks them)."""
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", PRIVATE_TMP, "--tmpfs", HIDDEN_RUN]
    for path in kept_through_tmp(readable):
        args += ["--ro-bind", path, path]
    if workspace is not None:
        args += ["--bind", workspace, workspace, "--chdir", workspace]
    args += ["--unshare-all"]
    if network:  # its name server's file, where /etc/resolv.conf points into /run
        args += ["--share-net", "--ro-bind-try", RESOLVER_RUN, RESOLVER_RUN]
    args += ["--cap-drop", "ALL", "--die-with-parent", "--new-session", "--"]
    return tuple(args)
