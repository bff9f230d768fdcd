"""Part of the one config model: what a command gets (environment, sandbox) and its probe."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mercury_nb.contract.permissions import DEFAULT_MODE, PermissionMode

SandboxMode = Literal["off", "workspace-write"]
"""``off``: commands run as your user, unconfined; ``workspace-write``: under bubblewrap."""

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class CommandSettings(BaseModel):
    """The fields of :class:`~mercury_nb.contract.config.MercuryConfig` that decide what a
    command (``run_command``, the notebook check) gets: which secret-named variables are
    handed on, and whether it runs in the sandbox (``MERCURY_<FIELD>`` like every field)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    pass_env: tuple[str, ...] = ()
    """Environment variables a command gets although they are withheld as secrets
    (``--pass-env NAME``, repeatable; ``MERCURY_PASS_ENV``, a comma-separated list)."""

    sandbox: SandboxMode = "off"
    """``workspace-write`` runs every command under bubblewrap: the filesystem read-only but
    the workspace and a private ``/tmp``, no network unless ``sandbox_network``, the process
    tree confined. A task refuses to start where the sandbox cannot run."""

    sandbox_network: bool = False
    """Let sandboxed commands reach the network (``--sandbox-network``)."""

    bwrap_path: str = "bwrap"
    """The bubblewrap program (a name looked up on ``PATH``, or a path)."""

    sandbox_probe_timeout_s: float = Field(default=10.0, gt=0)
    """How long the one probe of bubblewrap (a trivial sandboxed ``true``) may take."""

    notebook_total_timeout_s: float = Field(default=600.0, gt=0)
    """Time limit of one ``run_cells`` call (it starts as a command does): the kernel's start
    and all its cells together; then the run is stopped, kernel and all, and the cell it was
    in is named. Each cell has ``notebook_timeout_s``."""

    permissions: PermissionMode = DEFAULT_MODE
    """What the agent may do unasked (``--permissions MODE``): ``read-only`` reads only (and
    runs as ``chat``);
    ``ask``: every write and command asks; ``edits``: workspace edits run, commands ask
    unless an allow rule matches; ``auto``: everything runs unasked."""

    allow: tuple[str, ...] = ()
    """Allow rules: globs over a whole command (``--allow "python -m pytest*"``, repeatable;
    ``MERCURY_ALLOW``, a comma-separated list); a chained command runs unasked only when
    every part matches one."""

    approval_timeout_s: float = Field(default=300.0, gt=0)
    """How long an approval waits for its answer; then the action is denied."""

    @model_validator(mode="before")
    @classmethod
    def _read_only_answers(cls, data: object) -> object:
        """A ``read-only`` task answers or plans: it runs in the ``chat`` mode (no forced
        rounds, so its guard never forces a mutating step)."""
        if isinstance(data, dict) and data.get("permissions") == "read-only" \
                and "mode" in cls.model_fields:
            return {**data, "mode": "chat"}
        return data

    @field_validator("pass_env", "allow", mode="before")
    @classmethod
    def _split_names(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("allow")
    @classmethod
    def _rules(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(rule.strip() for rule in value if rule.strip()))

    @field_validator("pass_env")
    @classmethod
    def _names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [name for name in value if not _ENV_NAME.match(name)]
        if bad:
            raise ValueError(f"not an environment variable name: {', '.join(bad)}")
        return tuple(dict.fromkeys(value))
