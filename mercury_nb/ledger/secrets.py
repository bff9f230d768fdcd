"""What the ledger must never store: the API key and the values of key-like env variables.

The rules live in :mod:`mercury_nb.contract.redaction`; this module reads ``os.environ``."""

from __future__ import annotations

import os
from collections.abc import Mapping

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.redaction import known_secrets, redact_data

__all__ = ["ledger_secrets", "redact_data"]


def ledger_secrets(
    config: MercuryConfig | None, environ: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Every secret to mask before a write: the config's API key and key-like env values."""
    return known_secrets(config, os.environ if environ is None else environ)
