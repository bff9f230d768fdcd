"""Redaction of API keys, secret env values and token-looking strings from any text or data."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NewType, Protocol

from mercury_nb.contract.untrusted import clean

if TYPE_CHECKING:  # light: the ledger's store masks texts without loading pydantic
    from mercury_nb.contract.config import MercuryConfig

MASK = "***"

SECRET_NAME = re.compile(
    r"(?:_API_KEY|_KEY|_TOKEN|PASSWORD|_PASSWD|_PWD)(?:_?\d+)?$|_SECRET"
    r"|^(?:API_?KEY|TOKEN|SECRET)$",
    re.IGNORECASE,
)
"""Environment variable names that hold secrets: ``*_API_KEY``, ``*_KEY``, ``*_TOKEN``,
``*_SECRET*`` (``AWS_SECRET_ACCESS_KEY``), ``*PASSWORD`` (``PGPASSWORD``), ``*_PASSWD``,
``*_PWD`` (``MYSQL_PWD``; not ``PWD``, the working folder), each also numbered
(``OPENAI_API_KEY_2``), and the bare ``API_KEY``, ``APIKEY``, ``TOKEN``, ``SECRET``."""

MIN_SECRET_CHARS = 6
"""Shorter values of such variables are not masked: masking "1" or "yes" everywhere would
mangle every text without protecting anything."""

_NAME_CHARS = r"[A-Za-z0-9_]*"
_ASSIGNED_SECRET = re.compile(
    r"(?i)\b(" + _NAME_CHARS + r"(?:_API_KEY|_TOKEN|_SECRET" + _NAME_CHARS
    + r"|_PASSWORD|_PASSWD)[\"']?\s*[=:]\s*[\"']?)(?![\"'\s]|\*\*\*)[^\s\"'&,;]+"
)
"""``NAME=value`` / ``"NAME": "value"`` where NAME is a secret-named variable (a ``.env``
line, ``env`` output, a JSON document): the value is masked whatever it is."""

_TOKEN_PATTERNS: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = (
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), "sk-" + MASK, ("sk-",)),
    (re.compile(r"\b(?:gsk|hf|xai|ghp|github_pat)[-_][A-Za-z0-9_\-]{16,}"), MASK,
     ("gsk", "hf", "xai", "ghp", "github_pat")),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"), MASK, ("AIza",)),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), MASK, ("AKIA",)),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._\-~+/]{8,}=*"), r"\g<1>" + MASK, ()),
    (
        re.compile(
            r"(?i)\b((?:api[_-]?key|access[_-]?token|x-api-key|authorization)"
            r"[\"']?\s*[=:]\s*[\"']?)(?!bearer\b)[^\s\"'&,;]{6,}"
        ),
        r"\g<1>" + MASK,
        ("=", ":"),
    ),
    (_ASSIGNED_SECRET, r"\g<1>" + MASK, ("=", ":")),
    (  # a private key's PEM block (``~/.ssh/id_ed25519``), to its end or the text's
        re.compile(r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)(?:[\s\S]*?-----END [A-Z0-9 ]*"
                   r"PRIVATE KEY-----|[\s\S]*)"),
        r"\g<1>\n" + MASK + "\n-----END PRIVATE KEY-----",
        ("PRIVATE KEY",),
    ),
    (  # a ``.netrc`` password: ``login me password p`` on one line, or a line of its own
        re.compile(r"(?im)(\blogin\s+\S+\s+password\s+|^\s*password\s+)\S+"),
        r"\g<1>" + MASK,
        ("password", "PASSWORD", "Password"),
    ),
)
"""Each token shape, its mask, and the literals one of which its match must contain: a text
holding none of them is not searched (most texts hold none; the search is the slow part).
An empty tuple: the ``bearer`` pattern, checked on the lower-cased text instead."""

_ANY_NEEDLE = re.compile(
    r"sk-|gsk|hf|xai|ghp|github_pat|AIza|AKIA|[=:]|PRIVATE KEY|(?i:bearer|password)")
"""One scan for any of those literals: a text holding none is left as it is at once."""


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every given secret and every key-looking token replaced by ``***``.

    Each secret is stripped of surrounding whitespace and, when non-blank, masked wherever
    it occurs, longest first; then ``sk-…`` keys, other common provider token shapes,
    ``Bearer`` tokens, ``api_key=…`` values, ``SOME_SECRET=…`` / ``*_PASSWORD=…``
    assignments, private keys' PEM blocks and ``.netrc`` passwords.
    """
    if secrets:
        for secret in sorted({s.strip() for s in secrets if s.strip()}, key=len, reverse=True):
            text = text.replace(secret, MASK)
    if _ANY_NEEDLE.search(text) is None:
        return text
    bearer = "bearer" in text.lower()
    for pattern, replacement, needles in _TOKEN_PATTERNS:
        if any(needle in text for needle in needles) if needles else bearer:
            text = pattern.sub(replacement, text)
    return text


Masked = NewType("Masked", str)
"""A text masked once, where it entered the task, against every secret the task knows (its
keys and the env's secrets): later stages (the provider policy, the banner, the outcome)
show it as it is and never mask it again."""


def mask_once(text: str, secrets: Iterable[str]) -> Masked:
    """``text`` made displayable and :func:`redact`-ed with ``secrets``: a :data:`Masked`."""
    return Masked(redact(displayable(text), secrets))


class TextMemo(Protocol):
    """Redacted texts by their original (a ``dict[str, str]`` will do)."""

    def get(self, key: str, /) -> str | None: ...

    def __setitem__(self, key: str, value: str, /) -> None: ...


def redact_data(value: Any, secrets: Iterable[str] = (), memo: TextMemo | None = None) -> Any:
    """``value`` (JSON-ready data) with every string redacted, dict keys included
    (a file named after a key is a key of the start snapshot); numbers are kept.
    ``memo`` (for the same secrets) answers texts already redacted and keeps new ones: a
    conversation redacted again and again costs only its new messages."""
    return _walk(value, tuple(secrets), memo)


def _text(value: str, secrets: tuple[str, ...], memo: TextMemo | None) -> str:
    if memo is None:
        return redact(value, secrets)
    known = memo.get(value)
    if known is None:
        known = redact(value, secrets)
        memo[value] = known
    return known


def _walk(value: Any, secrets: tuple[str, ...], memo: TextMemo | None) -> Any:
    if isinstance(value, str):
        return _text(value, secrets, memo)
    if isinstance(value, dict):
        return {
            (_text(key, secrets, memo) if isinstance(key, str) else key):
                _walk(item, secrets, memo)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_walk(item, secrets, memo) for item in value]
    return value


def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret (see ``SECRET_NAME``)."""
    return SECRET_NAME.search(name) is not None and not name.upper().startswith("MERCURY_")


def env_secrets(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The stripped values of secret-named variables, at least ``MIN_SECRET_CHARS`` long."""
    found = (value.strip() for name, value in environ.items() if is_secret_name(name))
    return tuple(dict.fromkeys(v for v in found if len(v) >= MIN_SECRET_CHARS))


def namespace_secrets(namespace: Mapping[str, object]) -> tuple[str, ...]:
    """The string values of a kernel namespace's secret-named variables (``api_key``), and
    of the secret-named keys of its plain dicts (``settings["token"]``), at least
    ``MIN_SECRET_CHARS`` long: masked wherever code run there prints them. Only exact
    ``str`` and ``dict`` are looked into: no user code runs to find them."""
    found: list[str] = []
    for name, value in list(namespace.items()):
        pairs = [(name, value)]
        if type(value) is dict:
            pairs += [(k, v) for k, v in list(dict.items(value)) if type(k) is str]
        found += [v.strip() for k, v in pairs if type(v) is str and is_secret_name(k)]
    return tuple(dict.fromkeys(v for v in found if len(v) >= MIN_SECRET_CHARS))


def config_secrets(config: MercuryConfig) -> tuple[str, ...]:
    """The secrets the configuration knows about (today: its API key)."""
    if config.api_key is None:
        return ()
    key = config.api_key.get_secret_value().strip()
    return (key,) if key else ()


def known_secrets(config: MercuryConfig | None, environ: Mapping[str, str]) -> tuple[str, ...]:
    """Every secret to mask: the config's API key and the secret-named variables' values."""
    found = list(env_secrets(environ))
    if config is not None:
        found.extend(config_secrets(config))
    return tuple(dict.fromkeys(found))


def displayable(text: str) -> str:
    """``text`` as valid UTF-8 (see :func:`mercury_nb.contract.untrusted.clean`): surrogate
    escapes of undecodable bytes (a file name that is not UTF-8, ``bad\\udcffname``) become
    ``\\xff``-style escapes, other lone surrogates U+FFFD, so the text can be stored, printed
    and sent as JSON."""
    return clean(text)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.strip().encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class RedactedTexts:
    """Texts already redacted against some secrets, known by their digests (never their
    values): a later writer masks only the secrets these texts were not redacted against."""

    texts: frozenset[str]
    digests: frozenset[str]

    @classmethod
    def of(cls, texts: Iterable[str | None], secrets: Iterable[str]) -> RedactedTexts:
        """``texts`` (None left out), each the result of :func:`redact` with ``secrets``."""
        return cls(frozenset(t for t in texts if t is not None),
                   frozenset(_digest(s) for s in secrets if s.strip()))

    def secrets_left(self, text: str, secrets: Iterable[str]) -> tuple[str, ...] | None:
        """The ``secrets`` that ``text`` must still be redacted against: none when it is one
        of these texts and each of them was covered; None when it is not one of these texts
        (it was never redacted here: redact it in full)."""
        if text not in self.texts:
            return None
        return tuple(s for s in secrets if s.strip() and _digest(s) not in self.digests)
