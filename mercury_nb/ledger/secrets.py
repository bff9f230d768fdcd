"""What the ledger must never store: the API key and the values of key-like env variables."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.redaction import config_secrets, redact

SECRET_NAME_SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET")
"""Environment variables whose names end like this hold secrets (OPENAI_API_KEY, ...)."""

MIN_ENV_SECRET_CHARS = 8
"""Shorter values of such variables are not masked: masking "1" or "yes" everywhere would
mangle the record without protecting anything."""


def env_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of key-like environment variables, at least 8 characters long."""
    env = os.environ if environ is None else environ
    return tuple(
        value
        for name, value in env.items()
        if name.upper().endswith(SECRET_NAME_SUFFIXES)
        and len(value.strip()) >= MIN_ENV_SECRET_CHARS
    )


def ledger_secrets(
    config: MercuryConfig | None, environ: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Every secret to mask before a write: the config's API key and key-like env values."""
    found = list(env_secrets(environ))
    if config is not None:
        found.extend(config_secrets(config))
    return tuple(dict.fromkeys(found))


def redact_data(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` (JSON-ready data) with every string redacted; keys and numbers are kept."""
    masked = tuple(secrets)
    return _walk(value, masked)


def _walk(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {key: _walk(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(item, secrets) for item in value]
    return value
