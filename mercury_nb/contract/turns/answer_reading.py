"""Whether a reply that changed nothing answers, or narrates work it did not do.

Read only where nothing changed in the task, so any talk of a change is about one that did
not happen. Fenced code is set aside (a quoted file is no claim), curly apostrophes read as
straight ones, and the reading is anchored:

* it **promises** work — a sentence opens (after "ok", "sure", "now", "first", ...) with the
  first person setting out to act: "I'll", "I will", "I'm going to", "let me", "let's",
  "I need to", "first I'll" and a verb that acts ("Let me look through the notes folder.",
  "Sure! I'll create the file now."). Setting out to talk is no promise ("Let me explain:",
  "I'll be brief", "Let me know if ...");
* it **claims** a change — the first person says it made one ("I've updated notes.md", "I
  added the test", not "I changed nothing"), a passive says one was made ("the file has been
  created", "the bug is now fixed"), or a sentence opens "Here is the updated/fixed/...";
* it is **substantive** — some word is more than an acknowledgement ("OK.", "Done!", "Sure,
  will do.") or the reply quotes code. "Yes." and "No." answer;
* it **reads as an answer** — substantive, neither promising nor claiming, and no blocker or
  question by :func:`~mercury_nb.contract.turns.final_reply.classify_prose`.
"""

from __future__ import annotations

import re

from mercury_nb.contract.turns.final_reply import Done, classify_prose
from mercury_nb.contract.word_sets import word_set

__all__ = ["claims_change", "narrates", "promises_work", "reads_as_answer", "substantive"]

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?…:])\s+|\n+")
_OPENERS = (
    r"(?:(?:ok(?:ay)?|sure(?:\s+thing)?|alright|all\s+right|great|certainly|of\s+course"
    r"|absolutely|got\s+it|understood|no\s+problem|yes|now|first|next|then|so|well|right"
    r"|first\s+of\s+all|to\s+start|to\s+begin)\b[\s,!.:;—–-]*)*"
)
_PROMISE = re.compile(
    rf"^\W*{_OPENERS}"
    r"(?:i'll|i\s+will|i\s+shall|i'm\s+going\s+to|i\s+am\s+going\s+to|i'm\s+about\s+to"
    r"|i\s+am\s+about\s+to|i\s+need\s+to|let\s+me|let's|let\s+us|we'll|we\s+will"
    r"|i'll\s+now|i\s+will\s+now)\s+(?:now\s+|first\s+|quickly\s+|go\s+ahead\s+and\s+)?"
    r"(?P<verb>[a-z]+)",
    re.IGNORECASE,
)
_TALKING = word_set(
    "know explain describe summarize summarise clarify walk break note answer be say mention"
    " point tell share give recap repeat quote outline list respond reply help"
)
"""Verbs after "let me" / "I'll" that set out to talk, not to act on the workspace."""
_CHANGE_PARTICIPLES = (
    r"(?:created|written|wrote|added|updated|edited|modified|changed|fixed|saved|deleted"
    r"|removed|renamed|moved|replaced|inserted|appended|implemented|refactored|rewrote"
    r"|rewritten|installed|generated|applied|committed|patched|corrected|reformatted|cleaned"
    r"|made\s+the\s+changes?|made\s+changes?)"
)
_CLAIM = re.compile(
    r"\b(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|now\s+|successfully\s+|also\s+|already\s+)*"
    rf"{_CHANGE_PARTICIPLES}\b(?!\s+(?:nothing|no\b|none|anything))"
    r"|\b(?:has|have)\s+(?:now\s+)?been\s+(?:successfully\s+)?" + _CHANGE_PARTICIPLES + r"\b"
    r"|\b(?:is|are)\s+now\s+(?:fixed|updated|created|saved|corrected|installed|in\s+place)\b",
    re.IGNORECASE,
)
_HERE_IS_CHANGED = re.compile(
    r"^\W*here(?:'s|\s+is|\s+are)\s+(?:the|an?|your)\s+(?:updated|fixed|modified|corrected"
    r"|revised|improved|refactored|rewritten|edited|cleaned)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_ACKNOWLEDGEMENTS = word_set(
    "ok okay sure certainly absolutely alright all right great got it understood noted done"
    " finished complete completed set thanks thank you will do of course on here go there"
    " the task is has been"
)


def _prose(text: str) -> str:
    return _FENCE.sub(" ", text).replace("’", "'")


def _sentences(text: str) -> list[str]:
    return [" ".join(part.split()) for part in _SENTENCE_END.split(text) if part.strip()]


def promises_work(text: str) -> bool:
    """A sentence sets out to act on the workspace (see the module)."""
    for sentence in _sentences(_prose(text)):
        match = _PROMISE.search(sentence)
        if match is not None and match.group("verb").lower() not in _TALKING:
            return True
    return False


def claims_change(text: str) -> bool:
    """The reply says a change was made (none was: see the module)."""
    prose = _prose(text)
    if _CLAIM.search(prose):
        return True
    return any(_HERE_IS_CHANGED.search(sentence) for sentence in _sentences(prose))


def narrates(text: str) -> bool:
    """It promises work or claims a change: the narration the guard is for."""
    return promises_work(text) or claims_change(text)


def substantive(text: str) -> bool:
    """Some word is more than an acknowledgement, or the reply quotes code."""
    if "```" in text:
        return True
    words = (w.lower() for w in _WORD.findall(text.replace("’", "'")))
    return any(w not in _ACKNOWLEDGEMENTS for w in words)


def reads_as_answer(text: str) -> bool:
    """Substantive, no narration, and neither a blocker nor a question to the user."""
    return substantive(text) and not narrates(text) and isinstance(classify_prose(text), Done)
