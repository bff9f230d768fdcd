"""Whether a task asks a question (an answer, no changes expected) or asks for work.

Explicit mode wins: ``chat`` is always a question. In ``execute`` mode the reading is
anchored and works on whole words, never substrings ("latest" is not "test",
"address" is not "add"):

1. a question — the text opens with an interrogative or auxiliary ("what", "how",
   "is", "can", ..., "explain", "tell me", "describe"), or ends with "?" without
   opening with an imperative verb; a polite request ("can you add ...") is not one;
2. work — otherwise, when a word names software work: a coding verb ("implement",
   "refactor", "fix", ...), a software artifact ("test", "function", "notebook",
   "app", ...), a language or tool, a file path, ``code`` or a ``call()``;
3. otherwise a chat-like request ("make me a workout plan based on the latest
   research"): treated as a question, so it never triggers forced rounds. Wrongly
   reading work as chat costs an honest "no file changes" banner; wrongly reading
   chat as work would cost up to ten forced rounds of the narration guard.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal


class TaskIntent(StrEnum):
    """What the user expects back."""

    QUESTION = "question"
    WORK = "work"


def _table(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_INTERROGATIVES = _table(
    "what what's whats why how how's who who's whom whose when where where's which is isn't"
    " are aren't was were am can can't could would will does doesn't did didn't should shall"
    " may might has have had explain describe summarize summarise"
)
_TWO_WORD_OPENERS = frozenset({("tell", "me"), ("show", "me")})
_DO_SUBJECTS = frozenset({"you", "i", "we", "they", "u", "these", "those", "people"})
_POLITE_PREFIXES = (
    ("can", "you"),
    ("could", "you"),
    ("would", "you"),
    ("will", "you"),
    ("can", "u"),
    ("could", "u"),
)
_IMPERATIVE_VERBS = _table(
    "add create write build make fix implement refactor update change edit remove delete"
    " rename run generate install set move convert port optimize optimise improve clean"
    " rewrite extend modify replace debug test deploy migrate plot train load parse scaffold"
    " split merge append insert draft put use try finish complete continue resume proceed"
)
_CODING_VERBS = _table(
    "implement implementing refactor refactoring debug debugging fix compile deploy install"
    " lint typecheck scaffold vectorize unittest"
)
_ARTIFACTS = _table(
    "code codebase file files folder directory function functions method methods class"
    " classes module modules package library script scripts test tests testcase bug bugs error"
    " errors exception traceback repo repository project app application api cli endpoint"
    " endpoints server website webpage frontend backend database schema notebook notebooks"
    " cell cells dataframe dataset readme dockerfile makefile config configuration component"
    " widget parser variable variables parameter parameters argument arguments docstring"
    " docstrings dependency dependencies import imports plot chart regex commit decorator"
    " struct enum interface lambda recursion algorithm csv json yaml toml html css"
)
_TECHNOLOGIES = _table(
    "python javascript typescript js ts rust golang java kotlin cpp sql react vue svelte"
    " flask django fastapi pandas numpy matplotlib seaborn plotly pytorch torch tensorflow"
    " sklearn scikit node nodejs npm pip jupyter ipython pytest mypy ruff git docker litellm"
    " pydantic"
)
_FILE_OR_CALL = re.compile(
    r"`[^`]+`"  # inline code
    r"|\b[\w-]+\(\)"  # a call: parse()
    r"|(?<![\w/])(?:\.{1,2}|~)?/[\w.-]+(?:/[\w.-]+)*"  # a path: ./src, /tmp/x, ~/data
    r"|\b[\w-]+\.(?:py|ipynb|js|ts|tsx|jsx|json|md|txt|csv|tsv|toml|ya?ml|html|css|rs|go"
    r"|java|c|h|cpp|sh|sql|cfg|ini|r|rb|php|lock)\b",  # a file name
    re.IGNORECASE,
)
_TRAILING_CLOSERS = "\"'’”)]*_ \t\r\n"


def _words(text: str) -> list[str]:
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


def _strip_please(words: list[str]) -> list[str]:
    return [w for i, w in enumerate(words) if not (w == "please" and i <= 2)]


def looks_like_question(text: str) -> bool:
    """An anchored reading of the text's first words and last character."""
    words = _strip_please(_words(text))
    if not words:
        return False
    for prefix in _POLITE_PREFIXES:
        if tuple(words[:2]) == prefix:
            rest = words[2:]
            return not rest or rest[0] in _INTERROGATIVES or tuple(rest[:2]) in _TWO_WORD_OPENERS
    first = words[0]
    if first == "do":
        return len(words) > 1 and words[1] in _DO_SUBJECTS
    if first in _INTERROGATIVES or tuple(words[:2]) in _TWO_WORD_OPENERS:
        return True
    return text.rstrip(_TRAILING_CLOSERS).endswith("?") and first not in _IMPERATIVE_VERBS


def work_signals(text: str) -> tuple[str, ...]:
    """The words that name software work, then the code-like spans (files, paths,
    calls, inline code); words inside a span (the "app" of "app.py") are not counted."""
    spans = tuple(match.group(0) for match in _FILE_OR_CALL.finditer(text))
    words = _words(_FILE_OR_CALL.sub(" ", text))
    named = tuple(w for w in words if w in _CODING_VERBS or w in _ARTIFACTS or w in _TECHNOLOGIES)
    return named + spans


def _is_bare_resume(text: str) -> bool:
    return " ".join(_words(text)) in {"continue", "resume", "proceed", "go on", "keep going"}


def classify_intent(task: str, mode: Literal["execute", "chat"]) -> TaskIntent:
    """Explicit mode wins; then the anchored question reading; then work signals."""
    if mode == "chat" or looks_like_question(task):
        return TaskIntent.QUESTION
    if work_signals(task) or _is_bare_resume(task):
        return TaskIntent.WORK
    return TaskIntent.QUESTION
