"""The one place a command's environment and wrapper are decided (run_command, the notebook check).

:func:`prepare` takes the argv a tool wants to run and answers what actually starts: the
environment without the secrets (:func:`~mercury_nb.contract.command_env.
command_environment`, ``pass_env`` handing some on) and, with ``--sandbox
workspace-write``, the argv wrapped in bubblewrap (:func:`~mercury_nb.contract.
sandbox_policy.bwrap_arguments`). A sandbox that was asked for and cannot run raises
:class:`SandboxUnavailable`: the command is never started without it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import assert_never

from mercury_nb.contract.command_env import command_environment
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.redaction import config_secrets
from mercury_nb.contract.sandbox_policy import (
    SANDBOX_ENV,
    UNAVAILABLE,
    SandboxReady,
    bwrap_arguments,
    unavailable_text,
)
from mercury_nb.tools import sandbox_probe
from mercury_nb.tools.base import ToolError

SHELL = "/bin/sh"


class SandboxUnavailable(ToolError):
    """The sandbox was asked for and cannot run: nothing was started."""


@dataclass(frozen=True)
class Launch:
    """What starts: ``argv`` (bubblewrap first when sandboxed) in ``env``; ``withheld``: the
    variables of the environment kept from it."""

    argv: tuple[str, ...]
    env: dict[str, str]
    withheld: tuple[str, ...]
    sandboxed: bool


def own_environment() -> tuple[str, ...]:
    """The folders this process's Python runs from: its prefixes and the package's own
    root (an editable install), which a sandboxed ``python`` needs to see."""
    package_root = Path(__file__).resolve().parents[2]
    return tuple(str(Path(p).resolve()) for p in
                 (sys.prefix, sys.exec_prefix, sys.base_prefix, package_root))


def shell_argv(command: str) -> tuple[str, ...]:
    """A shell command line as an argv (what ``create_subprocess_shell`` runs)."""
    return (SHELL, "-c", command)


def prepare(argv: Sequence[str], config: MercuryConfig, workspace: Path, *,
            extra_env: Mapping[str, str] | None = None,
            environ: Mapping[str, str] | None = None) -> Launch:
    """``argv`` as it starts in ``workspace`` under ``config`` (see the module);
    ``extra_env`` is laid over the decided environment (the tool's own settings)."""
    decided = command_environment(os.environ if environ is None else environ,
                                  pass_env=config.pass_env, secrets=config_secrets(config))
    env = {**decided.env, **(extra_env or {})}
    match config.sandbox:
        case "off":
            return Launch(tuple(argv), env, decided.withheld, sandboxed=False)
        case "workspace-write":
            probed = sandbox_probe.probe(config.bwrap_path, config.sandbox_probe_timeout_s)
            if not isinstance(probed, SandboxReady):
                raise SandboxUnavailable(UNAVAILABLE.format(why=unavailable_text(probed)))
            wrapper = bwrap_arguments(probed.bwrap, str(workspace.resolve()),
                                      network=config.sandbox_network,
                                      readable=own_environment())
            return Launch((*wrapper, *argv), {**env, **SANDBOX_ENV}, decided.withheld,
                          sandboxed=True)
        case _ as unreachable:
            assert_never(unreachable)
