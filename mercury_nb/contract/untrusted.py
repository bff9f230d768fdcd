"""The one sanitizer of untrusted text (a model's output, a file name, a command line).

Three strengths, each built on the one before:

- :func:`clean` - valid UTF-8: lone surrogates replaced, so the text can be hashed, stored
  in the ledger, printed and sent as JSON. Every text from outside goes through it first.
- :func:`one_line` - :func:`clean`, then every control character, newline, carriage return,
  escape (ANSI), line or paragraph separator and bidirectional override shown as a visible
  escape (``\\n``, ``\\x1b``, ``\\u2028``), so the text stays on the one line it is put on and
  cannot draw a line of its own.
- :func:`shown_name` - :func:`one_line`, then in double quotes when the name could be taken
  for the product's own words: anything was escaped, it holds quotes, ends in a space, or
  starts with something other than a letter, digit or ``. _ / ~ -`` (``✓ Verified…``).

A model's multi-line answer keeps its lines, each shown as a quote (:func:`quoted_answer`).
"""

from __future__ import annotations

import re
from typing import Any

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)
"""C0 and C1 controls (newlines and ESC included), DEL, the Unicode line and paragraph
separators, and the marks that reorder or hide text (bidi embeddings, overrides, isolates,
the byte-order mark)."""

_SURROGATE = re.compile("[\ud800-\udfff]")

_JSON_SURROGATE = re.compile(
    r"\\u([dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\u([dD][89a-fA-F][0-9a-fA-F]{2})"
    r"|\\[\s\S]"
)
"""In JSON text: a surrogate pair escape (kept), a lone surrogate escape (replaced), or any
other escape (kept whole, so ``\\\\udcff`` - an escaped backslash - is left alone)."""

_NAME_START = re.compile(r"[\w./~-]")
_NEEDS_QUOTES = re.compile(r"[\"'`]|\s$")

REPLACEMENT = "\ufffd"


def clean(text: str) -> str:
    """``text`` as valid UTF-8. A surrogate escape of an undecodable byte (a file name that
    is not UTF-8, ``bad\\udcffname``) becomes a ``\\xff``-style escape; any other lone
    surrogate becomes U+FFFD. A text that is valid already is returned as it is."""
    if text.isascii():  # most streamed pieces: no surrogate, and no copy made to find out
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    if all(not 0xD800 <= ord(ch) <= 0xDFFF or 0xDC80 <= ord(ch) <= 0xDCFF for ch in text):
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _SURROGATE.sub(REPLACEMENT, text.encode("utf-16", "surrogatepass").decode(
        "utf-16", "replace"))


def clean_json(raw: str) -> str:
    """JSON text (a tool call's arguments) that decodes to no lone surrogate: :func:`clean`,
    and every ``\\udXXX`` escape that is not half of a pair replaced by ``\\ufffd``. Malformed
    JSON stays malformed in the same way; only those escapes change."""
    return _JSON_SURROGATE.sub(_json_escape, clean(raw))


def _json_escape(match: re.Match[str]) -> str:
    return "\\ufffd" if match.group(2) is not None else match.group(0)


def clean_data(value: Any) -> Any:
    """``value`` (JSON-ready data) with every string, dict keys included, :func:`clean`."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean_data(key): clean_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [clean_data(item) for item in value]
    return value


def one_line(text: str) -> str:
    """:func:`clean` ``text`` with every control, line-breaking and text-reordering
    character shown as an escape: a single line that draws nothing but its own words."""
    return _UNSAFE.sub(_escape, clean(text))


def shown_lines(text: str) -> str:
    """:func:`one_line` for each line of ``text``: its lines stay lines, and nothing else in
    it can draw, move the cursor, erase or reorder what is shown (a command an approval shows
    with ``\x1b[2K\r`` hiding its start)."""
    return "\n".join(one_line(line) for line in clean(text).split("\n"))


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown_name(name: str) -> str:
    """A file name (or other name) as shown in a banner or a summary: :func:`one_line`, and
    quoted when it could otherwise pass for the product's own words."""
    line = one_line(name)
    if line and line == name and _NAME_START.match(line) and not _NEEDS_QUOTES.search(line):
        return line
    return '"' + line.replace('"', '\\"') + '"'


def shown_names(names: Any) -> list[str]:
    """:func:`shown_name` of each name."""
    return [shown_name(name) for name in names]


ANSWER_PREFIX = "│ "
"""What every line of a model's answer is shown behind in text (the CLI, a plain cell): no
line of it starts where the product's own lines (``✓ Verified…``, ``✓ Task complete``) do."""


def quoted_answer(text: str) -> str:
    """A model's answer as a quote: each line :func:`one_line` (controls, escapes and
    separators shown escaped, a tab as spaces) behind :data:`ANSWER_PREFIX`."""
    lines = clean(text).strip().replace("\r\n", "\n").split("\n")
    return "\n".join((ANSWER_PREFIX + one_line(line.replace("\t", "    "))).rstrip()
                     for line in lines)
