"""Whether a text asks (an answer expected) by its first words and last character.

Two readings: :func:`asks_outright` — it opens with an interrogative or an auxiliary
("what", "how", "is", "can", "do you", ...) or ends in "?" without opening with an
imperative verb; and :func:`looks_like_question` — that, or it opens with a request for
words ("explain", "describe", "summarize", "tell me", "show me"), which may still ask for a
file ("Summarize README.md into SUMMARY.md"). A polite request ("can you add ...") is
neither. The imperative verbs are ``task_words``'s verbs that act on files, plus a few.
"""

from __future__ import annotations

import re

from mercury_nb.contract.gate.task_words import VERBS, VerbClass
from mercury_nb.contract.word_sets import word_set

WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_INTERROGATIVES = word_set(
    "what what's whats why how how's who who's whom whose when where where's which is isn't"
    " are aren't was were am can can't could would will does doesn't did didn't should shall"
    " may might has have had"
)
_WORD_REQUESTS = word_set("explain describe summarize summarise")
"""Openers that ask for words about something, not outright questions."""
TWO_WORD_OPENERS = frozenset({("tell", "me"), ("show", "me")})
_DO_SUBJECTS = frozenset({"you", "i", "we", "they", "u", "these", "those", "people"})
POLITE_PREFIXES = (
    ("can", "you"),
    ("could", "you"),
    ("would", "you"),
    ("will", "you"),
    ("can", "u"),
    ("could", "u"),
)
IMPERATIVE_VERBS = frozenset().union(
    *(verbs for cls, verbs in VERBS.items() if cls is not VerbClass.READ)
) | word_set(
    "install debug test deploy migrate plot train load parse use try continue resume proceed"
)
"""Verbs that open an instruction: the file verbs of ``task_words`` but the reading ones."""
TRAILING_CLOSERS = "\"'’”)]*_ \t\r\n"


def words_of(text: str) -> list[str]:
    return [w.replace("’", "'") for w in WORD.findall(text.lower())]


def strip_please(words: list[str]) -> list[str]:
    return [w for i, w in enumerate(words) if not (w == "please" and i <= 2)]


def _reading(text: str) -> str | None:
    """``"outright"``, ``"words"`` (a request for words) or None (no question)."""
    words = strip_please(words_of(text))
    if not words:
        return None
    for prefix in POLITE_PREFIXES:
        if tuple(words[:2]) == prefix:
            rest = words[2:]
            if not rest or rest[0] in _INTERROGATIVES:
                return "outright"
            return "words" if _requests_words(rest) else None
    first = words[0]
    if first == "do":
        return "outright" if len(words) > 1 and words[1] in _DO_SUBJECTS else None
    if first in _INTERROGATIVES:
        return "outright"
    if _requests_words(words):
        return "words"
    if text.rstrip(TRAILING_CLOSERS).endswith("?") and first not in IMPERATIVE_VERBS:
        return "outright"
    return None


def _requests_words(words: list[str]) -> bool:
    return words[0] in _WORD_REQUESTS or tuple(words[:2]) in TWO_WORD_OPENERS


def asks_outright(text: str) -> bool:
    """An interrogative or auxiliary opening, or a "?" ending without an imperative verb:
    a question that names files only to read them."""
    return _reading(text) == "outright"


def looks_like_question(text: str) -> bool:
    """An outright question, or a request for words ("explain", "tell me", ...)."""
    return _reading(text) is not None
