"""What the ledger must never store: the API key and the values of key-like env variables.

The rules live in :mod:`mercury_nb.contract.redaction`; this module reads ``os.environ``."""

from __future__ import annotations

import os
from collections.abc import Mapping

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.redaction import MIN_SECRET_CHARS, known_secrets, redact_data
from mercury_nb.contract.redaction import env_secrets as _env_secrets

SECRET_NAME_SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
"""Kept for callers; names are matched by ``contract.redaction.SECRET_NAME``."""

MIN_ENV_SECRET_CHARS = MIN_SECRET_CHARS

__all__ = ["env_secrets", "ledger_secrets", "redact_data"]


def env_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of secret-named environment variables (stripped)."""
    return _env_secrets(os.environ if environ is None else environ)


def ledger_secrets(
    config: MercuryConfig | None, environ: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Every secret to mask before a write: the config's API key and key-like env values."""
    return known_secrets(config, os.environ if environ is None else environ)
