"""Grounded answers: which named files a question gets read first, which an answer cites unread.

A question that names workspace files gets them read by the agent itself, before the first
request, and sent as verified context (the narration guard's grounding idea, applied to
answers): :func:`named_paths` finds the names, the edge observes each (:class:`PathFacts`,
through the workspace's confinement), :func:`plan_grounding` picks what to read within the
budget, and :func:`format_answer_grounding` writes the message. After the answer,
:func:`unread_files` names the workspace files it talks about that the task never read (not
the agent's grounding, not a read_file / read_notebook call); the ending carries them and the
banner says :data:`UNREAD_NOTICE`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.escalation.guard_texts import GROUNDING_HEADER
from mercury_nb.contract.gate.file_names import FILE_NAME_PATTERN, NOT_INSIDE_A_NAME

UNREAD_NOTICE = "answered without reading {names}"
"""Shown with an answer that talks about workspace files the task never read."""

ANSWER_GROUNDING_INTRO = (
    "The question names these workspace files. The agent read them itself before any reply; "
    "their content below is verified. Answer from it, and say so if it does not hold the answer."
)
FILE_OPENING = "=== file: {path} ==="
FILE_CLOSING = "=== end of {path} ==="
NOT_READ = "(not read: {path} {why})"

MAX_BYTES_PER_CHAR = 4
"""A UTF-8 character takes at most 4 bytes: a file larger than 4 × the read cap cannot be
shown whole, and is not read for grounding at all (the model may page it with read_file)."""
MIN_CHARS_EACH = 1000
"""Each grounded file gets at least this many characters, however many share the budget."""

_NAMED = re.compile(
    rf"`(?P<quoted>[^`\n]+)`|(?P<bare>{NOT_INSIDE_A_NAME}{FILE_NAME_PATTERN})", re.IGNORECASE
)
"""A file named in prose: inline code, or a file name (``README.md``, ``src/a.py``,
``./notes.txt``: the gate's one file-name reader); a trailing full stop is not part of it."""

Kind = Literal["file", "missing", "not_regular", "outside"]


def named_paths(text: str) -> tuple[str, ...]:
    """The file names ``text`` mentions, as written, in order, each once."""
    found: list[str] = []
    for match in _NAMED.finditer(text):
        name = (match.group("quoted") or match.group("bare") or "").strip()
        if name and name not in found:
            found.append(name)
    return tuple(found)


@dataclass(frozen=True)
class PathFacts:
    """What the edge saw of one named path: the workspace-relative path it resolves to (None
    when it leaves the workspace or cannot be resolved), its kind and its size in bytes."""

    written: str
    relative: str | None
    kind: Kind
    size: int = 0


@dataclass(frozen=True)
class GroundingRead:
    """A file to read for grounding, at most ``chars`` characters of it."""

    written: str
    relative: str
    chars: int


@dataclass(frozen=True)
class GroundingSkip:
    """A named workspace file that is not read, and why (shown in the message)."""

    written: str
    why: str


@dataclass(frozen=True)
class GroundingPlan:
    reads: tuple[GroundingRead, ...] = ()
    skipped: tuple[GroundingSkip, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.reads and not self.skipped


def plan_grounding(facts: Sequence[PathFacts], budget_chars: int,
                   config: MercuryConfig) -> GroundingPlan:
    """Regular files inside the workspace, each once, at most ``answer_grounding_files`` of
    them, sharing ``budget_chars`` (never more than ``read_file_max_chars`` each). A file too
    large to show whole is skipped with its size; missing paths, paths outside the workspace
    and non-regular files are left out silently (a name in prose may be no file at all)."""
    limit_bytes = config.read_file_max_chars * MAX_BYTES_PER_CHAR
    chosen: list[PathFacts] = []
    skipped: list[GroundingSkip] = []
    seen: set[str] = set()
    for fact in facts:
        if fact.kind != "file" or fact.relative is None or fact.relative in seen:
            continue
        seen.add(fact.relative)
        if fact.size > limit_bytes:
            skipped.append(GroundingSkip(fact.written, f"is {fact.size:,} bytes, too large to "
                                         "include; page it with read_file"))
        elif len(chosen) < config.answer_grounding_files:
            chosen.append(fact)
        else:
            skipped.append(GroundingSkip(
                fact.written, f"— only {config.answer_grounding_files} named files are read first"))
    if not chosen:
        return GroundingPlan(skipped=tuple(skipped))
    each = max(MIN_CHARS_EACH, min(config.read_file_max_chars, budget_chars // len(chosen)))
    reads = tuple(GroundingRead(f.written, f.relative or f.written, each) for f in chosen)
    return GroundingPlan(reads, tuple(skipped))


def format_answer_grounding(cwd: str, pages: Sequence[tuple[str, str]],
                            skipped: Sequence[GroundingSkip] = ()) -> str:
    """The grounding message for an answer: the guard's grounding header, the intro, then each
    ``(path, content)`` between markers (content already bounded and redacted by the edge),
    then one line per skipped file."""
    lines = [GROUNDING_HEADER.format(cwd=cwd), ANSWER_GROUNDING_INTRO]
    for path, content in pages:
        lines.extend([FILE_OPENING.format(path=path), content.rstrip("\n"),
                      FILE_CLOSING.format(path=path)])
    lines.extend(NOT_READ.format(path=s.written, why=s.why) for s in skipped)
    return "\n".join(lines)


@dataclass(frozen=True)
class Mention:
    """A workspace file an answer names: as written, and the relative path it resolves to."""

    written: str
    relative: str


def unread_files(mentions: Sequence[Mention], read: Collection[str]) -> tuple[str, ...]:
    """The names (as written) of the mentioned files whose relative path was never read,
    each file once, in the answer's order."""
    names: list[str] = []
    seen: set[str] = set()
    for mention in mentions:
        if mention.relative in read or mention.relative in seen:
            continue
        seen.add(mention.relative)
        names.append(mention.written)
    return tuple(names)


def unread_notice(names: Sequence[str]) -> str:
    """``answered without reading README.md`` (several names joined by commas)."""
    return UNREAD_NOTICE.format(names=", ".join(names))
