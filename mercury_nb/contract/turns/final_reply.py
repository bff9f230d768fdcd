"""What a turn's final reply says of the work: done, blocked (and why) or a question to the user.

The model says it with the ``finish`` tool (a typed :class:`FinishCall`); that reading
always wins. Without one, the prose is read as a fallback, anchored so a word in the
middle of a report does not flip it:

* a question — the reply ends by asking the user
  (:func:`~mercury_nb.contract.escalation.guard_texts.asks_user`). Once the task has
  changed something, an offer of more ("Would you like me to add tests too?", "Anything
  else?") closes a report and is not a question that holds the work up;
* blocked — the reply opens with "Unfortunately…", or with an apology that turns or
  negates ("I'm sorry, but…", "Sorry, nothing…") or is all there is; or its first or last
  sentence says in the first person that it could not do the work ("I can't…", "I was
  unable to…", "I'm not capable of…"). The sentence that says so is the reason. An
  apology that goes on to report ("Sorry for the oversight. I ran the tests: they pass.")
  is no blocker;
* done — anything else. "Done" is a claim, never proof: the verification gate still asks
  for evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, assert_never

from mercury_nb.contract.escalation.guard_texts import asks_user

FinishStatus = Literal["done", "blocked", "question", "no_change"]
"""``no_change``: the task needs no change to the workspace, ``summary`` is the answer (the
narration guard's typed "no change needed" choice; ``guard_trigger`` decides what it ends)."""

NO_REASON = "the model said it was blocked but did not say by what"
"""The reason of a ``finish(blocked)`` call that named nothing."""
NO_QUESTION = "the model said it had a question but did not ask it"
"""The question of a ``finish(question)`` call that asked nothing."""


@dataclass(frozen=True)
class FinishCall:
    """The model's typed end of a turn: the ``finish`` tool's arguments."""

    status: FinishStatus
    summary: str = ""
    """What was done, or the answer."""
    detail: str = ""
    """The blocker (``blocked``) or the question to the user (``question``)."""


@dataclass(frozen=True)
class Done:
    """The reply claims the work is done (or answers): the gate decides on evidence."""

    source: Literal["finish", "prose"] = "prose"


@dataclass(frozen=True)
class Blocked:
    """The reply says the work could not be done; ``reason`` says what stood in the way."""

    reason: str
    source: Literal["finish", "prose"] = "prose"


@dataclass(frozen=True)
class Question:
    """The reply asks the user something the work waits on."""

    text: str
    source: Literal["finish", "prose"] = "prose"


FinalReply = Done | Blocked | Question

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_APOLOGY_OPENER = re.compile(
    r"^\W*(?:(?:i'?m|i am)\s+(?:so\s+|very\s+|really\s+|truly\s+)?sorry|sorry|"
    r"(?:my\s+)?apologies|i\s+apologi[sz]e)\b",
    re.IGNORECASE,
)
_ONLY_APOLOGY = re.compile(
    _APOLOGY_OPENER.pattern + r"(?:[\s,]+for\s+[\w\s']+)?\W*$", re.IGNORECASE
)
_UNFORTUNATELY = re.compile(r"^\W*unfortunately\b", re.IGNORECASE)
_TURN_OR_NEGATION = re.compile(
    r"\b(?:but|however|unfortunately|not|no|nothing|never)\b|n't\b", re.IGNORECASE
)
_INABILITY = re.compile(
    r"\bi(?:'m|\s+am)\s+(?:not\s+(?:able|capable)|unable)\s+(?:to|of)\b"
    r"|\bi\s+(?:can't|cannot|can\s+not|couldn't|could\s+not|won't\s+be\s+able\s+to"
    r"|wasn't\s+able\s+to|was\s+not\s+able\s+to|was\s+unable\s+to|failed\s+to"
    r"|don't\s+have\s+(?:access|permission)|do\s+not\s+have\s+(?:access|permission))\b",
    re.IGNORECASE,
)
_OFFER = re.compile(
    r"^\W*(?:(?:would|do)\s+you\s+(?:like|want)\s+me\s+to|(?:shall|should)\s+i\b|"
    r"(?:is\s+there\s+)?anything\s+else|(?:let|tell)\s+me\s+know|want\s+me\s+to)",
    re.IGNORECASE,
)


def classify_final_reply(
    finish: FinishCall | None, text: str, *, work_done: bool = False
) -> FinalReply:
    """The final reply's kind: the typed ``finish`` call when there is one, else the prose.

    ``work_done``: the task has already changed something (an offer of more then closes a
    report rather than holding the work up)."""
    if finish is not None:
        return _typed(finish)
    return classify_prose(text, work_done=work_done)


def classify_prose(text: str, *, work_done: bool = False) -> FinalReply:
    """The fallback reading of a reply without a ``finish`` call (see the module doc)."""
    prose = _FENCE.sub(" ", text).replace("’", "'")  # a curly apostrophe reads as "'"
    sentences = _sentences(prose)
    if not sentences:
        return Done()
    last = sentences[-1]
    if asks_user(text) and not (work_done and _OFFER.search(last)):
        return Question(last)
    first = sentences[0]
    apology = _APOLOGY_OPENER.search(first) is not None and (
        _ONLY_APOLOGY.search(" ".join(sentences)) is not None
        or _TURN_OR_NEGATION.search(first) is not None)
    if apology or _UNFORTUNATELY.search(first) or _INABILITY.search(first):
        return Blocked(first)
    if _INABILITY.search(last):
        return Blocked(last)
    return Done()


def _typed(finish: FinishCall) -> FinalReply:
    summary, detail = finish.summary.strip(), finish.detail.strip()
    match finish.status:
        case "done" | "no_change":  # an answer: whether it may end the task is the guard's
            return Done("finish")
        case "blocked":
            return Blocked(detail or summary or NO_REASON, "finish")
        case "question":
            return Question(detail or summary or NO_QUESTION, "finish")
        case _ as unreachable:
            assert_never(unreachable)


def answer_of(finish: FinishCall) -> str:
    """What the user reads of a ``finish`` call: the summary, then the blocker or question
    when the summary does not already say it."""
    summary, detail = finish.summary.strip(), finish.detail.strip()
    if detail and detail not in summary:
        return f"{summary}\n\n{detail}" if summary else detail
    return summary


def _sentences(text: str) -> list[str]:
    flat = [" ".join(part.split()) for part in _SENTENCE_END.split(text)]
    return [part for part in flat if any(ch.isalnum() for ch in part)]
