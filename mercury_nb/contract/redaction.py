"""Redaction of API keys and token-looking strings from any text shown, stored or logged."""

from __future__ import annotations

import re
from collections.abc import Iterable

from mercury_nb.contract.config import MercuryConfig

MASK = "***"

_TOKEN_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), "sk-" + MASK),
    (re.compile(r"\b(?:gsk|hf|xai|ghp|github_pat)[-_][A-Za-z0-9_\-]{16,}"), MASK),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"), MASK),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._\-~+/]{8,}=*"), r"\g<1>" + MASK),
    (
        re.compile(
            r"(?i)\b((?:api[_-]?key|access[_-]?token|x-api-key|authorization)"
            r"[\"']?\s*[=:]\s*[\"']?)(?!bearer\b)[^\s\"'&,;]{6,}"
        ),
        r"\g<1>" + MASK,
    ),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every given secret and every key-looking token replaced by ``***``.

    Each non-blank secret is masked wherever it occurs, longest first; then ``sk-…`` keys,
    other common provider token shapes, ``Bearer`` tokens and ``api_key=…`` values.
    """
    for secret in sorted({s for s in secrets if s.strip()}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    for pattern, replacement in _TOKEN_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def config_secrets(config: MercuryConfig) -> tuple[str, ...]:
    """The secrets the configuration knows about (today: its API key)."""
    if config.api_key is None:
        return ()
    return (config.api_key.get_secret_value(),)
