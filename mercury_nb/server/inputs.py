"""Reading the panel API's inputs: every malformed one is a :class:`BadRequest`, never a 500.

A request's body is JSON of at most ``MAX_BODY_BYTES`` (413 above), UTF-8, nested no deeper
than ``MAX_JSON_DEPTH``, and every string in it free of NUL characters and lone surrogates
(neither can name a file, nor reach a model, a ledger row or a log intact); then it is
validated by its pydantic model. Query integers are decimal and within ``0..MAX_OFFSET``
(SQLite's largest integer), so no huge number reaches a query.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError
from tornado import web

from mercury_nb.server.models import MAX_BODY_BYTES

MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays and objects a body may have (the bodies are flat objects)."""
MAX_OFFSET = 2**63 - 1
"""The largest integer a query parameter may carry (SQLite's own)."""


class BadRequest(web.HTTPError):
    """A malformed input: ``status`` (400, 413) and what is wrong with it. Raised from a
    handler, the base handler's ``write_error`` answers it as ``{"error": message}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status)
        self.status = status
        self.message = message

    def __str__(self) -> str:
        return self.message


def _depth(raw: str) -> int:
    """The deepest nesting of ``[`` / ``{`` in JSON text ``raw`` (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in raw:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def bad_text(value: str) -> str | None:
    """Why ``value`` cannot be taken as text (a NUL, a lone surrogate), or None."""
    if "\x00" in value:
        return "contains a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate"
    return None


def _bad_strings(value: Any, where: str = "body") -> str | None:
    if isinstance(value, str):
        why = bad_text(value)
        return f"{where} {why}" if why else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _bad_strings(key, where) or _bad_strings(item, f"{key}")
            if found:
                return found
    if isinstance(value, list):
        for item in value:
            found = _bad_strings(item, where)
            if found:
                return found
    return None


def parse_body(raw: bytes, model: type[BaseModel], *, optional: bool = False,
               max_bytes: int = MAX_BODY_BYTES) -> Any:
    """``raw`` as an instance of ``model``, or a :class:`BadRequest` (413 or 400);
    ``max_bytes``: a route's own bound, for the one body that carries a notebook."""
    if len(raw) > max_bytes:
        raise BadRequest(413, f"request body over {max_bytes} bytes")
    if optional and not raw.strip():
        raw = b"{}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest(400, "request body is not valid JSON (not UTF-8)") from None
    if _depth(text) > MAX_JSON_DEPTH:
        raise BadRequest(400, f"request body is nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # a number of over 4,300 digits is a ValueError
        raise BadRequest(400, "request body is not valid JSON") from None
    why = _bad_strings(data)
    if why is not None:
        raise BadRequest(400, f"invalid request: {why}")
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
            for e in error.errors()
        )
        raise BadRequest(400, f"invalid request: {problems}") from None


def query_int(raw: str, name: str, low: int, high: int) -> int:
    """``raw`` (a query parameter) as a decimal integer in ``low..high``, else a 400."""
    text = raw.strip()
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not (digits.isascii() and digits.isdigit()) or len(digits) > 19:
        raise BadRequest(400, f"{name} must be an integer in {low}..{high}")
    value = int(text)
    if not low <= value <= high:
        raise BadRequest(400, f"{name} must be an integer in {low}..{high}")
    return value
