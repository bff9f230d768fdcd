"""Plan: every source of settings (flags, traitlets, environment, checkpoint) into one config.

:func:`plan` is the one function that decides precedence. For a new task, lowest first:
defaults, traitlets (``c.Mercury.*``), ``MERCURY_*`` environment, explicit flags. For a
resumed task the checkpoint's saved settings stand in for the defaults, traitlets and
environment (the task resumes as it ran), except the API key and the ledger home, which
are always the current ones; explicit flags still win, and a new ``--model`` without
``--fallback`` drops the old fallbacks.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mercury_nb.contract.config import MercuryConfig

FRONT_END_FLAGS = frozenset({"wait", "json", "command", "id", "task", "quiet"})
"""Flags of the magic and the CLI that are not settings (ignored by :func:`plan`)."""

CONTINUE_FLAGS = ("model", "fallback", "fallbacks", "api_base", "max_steps", "yes", "auto_yes",
                  "pass_env", "sandbox", "sandbox_network", "max_cost_usd", "max_tokens",
                  "permissions", "allow")
"""The flags a ``continue`` lays over its checkpoint's settings (``--max-cost 1`` raises
the budget a task paused on). A resumed task keeps its own
workspace and mode: ``--workdir`` only picks whose paused task continues, and ``--chat``
does not turn a task into a question."""


def continue_flags(flags: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a front end's flags a ``continue`` applies (see :data:`CONTINUE_FLAGS`)."""
    return {name: flags[name] for name in CONTINUE_FLAGS if name in flags}


def flag_values(flags: Mapping[str, Any]) -> dict[str, Any]:
    """The explicitly given flags as config fields: ``fallback`` (a list) becomes
    ``fallbacks``, ``chat`` the chat mode, ``yes`` ``auto_yes``; unset (None / False)
    flags are dropped, so they never override anything."""
    values: dict[str, Any] = {}
    for name, value in flags.items():
        if value is None or name in FRONT_END_FLAGS:
            continue
        match name:
            case "fallback" | "fallbacks":
                if value:
                    values["fallbacks"] = tuple(value)
            case "chat":
                if value:
                    values["mode"] = "chat"
            case "yes" | "auto_yes":
                if value:
                    values["auto_yes"] = True
            case "pass_env" | "allow":
                if value:
                    values[name] = tuple(value)
            case "sandbox_network":
                if value:
                    values["sandbox_network"] = True
            case "workdir":
                values["workdir"] = Path(str(value)).expanduser()
            case _ if name in MercuryConfig.model_fields:
                values[name] = value
            case _:
                raise ValueError(f"unknown setting {name!r}")
    return values


def plan(
    flags: Mapping[str, Any] | None = None,
    *,
    traitlets: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    checkpoint: Mapping[str, Any] | None = None,
    current: MercuryConfig | None = None,
    check_workdir: bool = True,
) -> MercuryConfig:
    """The one settings object of a run (see the module docstring for the precedence).

    ``checkpoint`` is a resumed task's checkpoint (its ``config`` entry is used); ``current``
    is the config already planned for this front end, whose API key and home a resumed task
    takes (planned from ``traitlets`` and ``env`` when not given). Raises pydantic's
    ``ValidationError`` (a ``ValueError``) for invalid values; ``check_workdir`` False leaves
    a new task's workdir to the caller (:func:`~mercury_nb.runs.resolve.resolve`)."""
    given = flag_values(flags or {})
    environ = os.environ if env is None else env
    if checkpoint is None:
        return MercuryConfig.load(environ, base=traitlets or {}, check_workdir=check_workdir,
                                  **given)
    now = current or MercuryConfig.load(environ, base=traitlets or {})
    stored = {key: value for key, value in dict(checkpoint.get("config") or {}).items()
              if key in MercuryConfig.model_fields and key != "api_key"}
    if "model" in given and "fallbacks" not in given:
        given["fallbacks"] = ()
    return MercuryConfig.model_validate(
        {**stored, "api_key": now.api_key, "home": now.home, **given}
    )
