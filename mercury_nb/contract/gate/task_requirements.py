"""What a task asks for, as data, and whether a read-back of the changed files answers it.

The files it names and what to do with each, the runs it asks for, the files that must
exist at the end, and the kind of work (code, tests, a run, or content);
``task_reading.read_task`` reads it from the task's words. Content (notes, docs, prose,
data) is the only kind a read-back can verify; code, tests and runs need a check.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Literal

from mercury_nb.contract.gate.file_kinds import is_non_code_path, normalize_path, same_file
from mercury_nb.contract.gate.requested_runs import NO_RUNS, RequestedRuns
from mercury_nb.contract.gate.task_words import ARTIFACT_PLACES, FILE_NOUNS, UNRELATED_WORDS

WorkKind = Literal["code", "tests", "run", "content"]
CHECKED_KINDS: frozenset[WorkKind] = frozenset({"code", "tests", "run"})
"""Kinds of work that only a passing check (or the requested run) can verify."""


class FileRole(Enum):
    """What the task asks the agent to do with a file it names."""

    WRITE = "write"  # create or write it: it must exist at the end
    EDIT = "edit"  # change it: it must still exist at the end
    MENTION = "mention"  # named, with no verb of its own
    DESCRIBED = "described"  # named in what a program does ("a script that writes out.csv")
    READ = "read"  # only read it (a reference, a source)
    RUN = "run"  # run it
    REMOVE = "remove"  # delete it, or move it away: it must not exist at the end


EXISTING_ROLES = frozenset({FileRole.WRITE, FileRole.EDIT})
PLACE_ROLES = frozenset({FileRole.WRITE, FileRole.EDIT, FileRole.MENTION, FileRole.REMOVE})


@dataclass(frozen=True)
class NamedFile:
    """A file the task names, normalized, and what the task asks to do with it."""

    path: str
    role: FileRole


@dataclass(frozen=True)
class TaskRequirements:
    """The pure reading of a task. The empty reading asks for nothing a read-back verifies."""

    files: tuple[NamedFile, ...] = ()
    kinds: frozenset[WorkKind] = frozenset()
    runs: RequestedRuns = NO_RUNS
    must_exist: tuple[str, ...] = ()
    """The files the task asks to create, write or edit (none for a question or chat)."""
    artifacts: tuple[str, ...] = ()
    """Artifact nouns the task writes or edits ("readme", "changelog", "docs", "notes"): places
    matched loosely (``task_words.ARTIFACT_PLACES``)."""
    words: frozenset[str] = frozenset()
    """The task's words: what a changed file must relate to when the task names no place."""

    @property
    def needs_check(self) -> bool:
        """Code, tests or a run: only a passing check after the last change verifies it."""
        return bool(self.kinds & CHECKED_KINDS)

    @property
    def places(self) -> tuple[str, ...]:
        """Where the task said the work goes: the files it names to write, edit or remove."""
        return unique_paths(f.path for f in self.files if f.role in PLACE_ROLES)

    def is_place(self, path: str) -> bool:
        """True when ``path`` is one of :attr:`places`, of the numbered series one names
        ("part0.txt to part3.txt": ``part2.txt``, same folder and suffix); when the task
        names no file, one that matches an artifact it names (README -> README*, docs ->
        docs/**: "Write notes in notes.md" wants notes.md, not notes2.md)."""
        if self.places:
            return any(same_file(p, path) or _same_series(p, path) for p in self.places)
        return any(_matches(pattern, path)
                   for artifact in self.artifacts for pattern in ARTIFACT_PLACES[artifact])

    def removes(self, path: str) -> bool:
        """True when the task asks to delete ``path`` (or to move it away)."""
        return any(f.role is FileRole.REMOVE and same_file(f.path, path) for f in self.files)

    def relates(self, path: str) -> bool:
        """True when a word of the file's name, or its format, is a word of the task
        ("Write a poem about cats" + cats.md, "Generate a CSV of primes" + out.csv), or the
        task's noun is a bare "file" ("edit both files": any file is one)."""
        if self.words & FILE_NOUNS:
            return True
        name = posixpath.basename(normalize_path(path)).lower()
        stem, suffix = posixpath.splitext(name)
        parts = {w for w in _NAME_WORDS.findall(stem) if len(w) >= 3}
        parts |= {w[:-1] for w in parts if w.endswith("s")}
        format_words = {suffix[1:], *_FORMAT_WORDS.get(suffix, ())}
        task = (self.words | {w[:-1] for w in self.words if w.endswith("s")}) - UNRELATED_WORDS
        return bool((parts | format_words) & task)

    def read_back_verifies(
        self, changed_paths: Iterable[str], deleted: Collection[str] = ()
    ) -> bool:
        """A read-back of the changed files verifies the task: it asks for content and no
        code, tests or run, every changed file is prose or data and was created or modified
        (a deleted one only when the task asks to remove it), and every changed file is
        where the task said (a file or an artifact it names) or, when it named no place,
        relates to the task's words. ``deleted`` are the changed paths that are gone."""
        changed = list(changed_paths)
        if not changed or self.needs_check or "content" not in self.kinds:
            return False
        if not all(is_non_code_path(p) for p in changed):
            return False
        if any(p in deleted and not self.removes(p) for p in changed):
            return False
        if self.places or self.artifacts:
            return all(self.is_place(p) for p in changed)
        return all(self.relates(p) for p in changed)


_NAME_WORDS = re.compile(r"[a-z]+")
_FORMAT_WORDS: dict[str, tuple[str, ...]] = {
    ".md": ("markdown",), ".markdown": ("markdown",), ".txt": ("text",),
    ".xlsx": ("excel", "spreadsheet"), ".xls": ("excel", "spreadsheet"), ".tex": ("latex",),
}


def _matches(pattern: str, path: str) -> bool:
    """``name*``: the file's name holds ``name`` (any case, any folder: ``README.md``,
    ``release-notes.md``); ``dir/**``: ``path`` lies under a folder named ``dir``."""
    parts = normalize_path(path).lower().split("/")
    if pattern.endswith("/**"):
        return pattern[:-3] in parts[:-1]
    return pattern.rstrip("*") in parts[-1]


_TEST_NAME = re.compile(r"(?:^test_.+|.+_test|.+[._-](?:test|spec))\.\w+$", re.IGNORECASE)


def is_test_path(path: str) -> bool:
    """``test_x.py``, ``x_test.go``, ``x.test.ts``, ``x.spec.js`` or a file under ``tests/``."""
    parts = normalize_path(path).lower().split("/")
    return bool(_TEST_NAME.match(parts[-1])) or any(p in {"test", "tests"} for p in parts[:-1])


_DIGITS = re.compile(r"\d+")


def _same_series(named: str, other: str) -> bool:
    a, b = normalize_path(named), normalize_path(other)
    if not _DIGITS.search(posixpath.basename(a)):
        return False
    return _DIGITS.sub("#", a) == _DIGITS.sub("#", b)


def unique_paths(paths: Iterable[str]) -> tuple[str, ...]:
    seen: list[str] = []
    for path in paths:
        if path not in seen:
            seen.append(path)
    return tuple(seen)


NOTHING_ASKED = TaskRequirements()
"""The empty reading: no files, no kinds; a read-back verifies nothing."""
