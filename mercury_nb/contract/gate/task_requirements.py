"""What a task asks for, as data, and whether a read-back of the changed files answers it.

The files it names and what to do with each, the runs it asks for, the files that must
exist at the end, and the kind of work (code, tests, a run, or content);
``task_reading.read_task`` reads it from the task's words. Content (notes, docs, prose,
data) is the only kind a read-back can verify; code, tests and runs need a check.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Literal

from mercury_nb.contract.gate.file_kinds import is_non_code_path, normalize_path, same_file
from mercury_nb.contract.gate.requested_runs import NO_RUNS, RequestedRuns

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

    @property
    def needs_check(self) -> bool:
        """Code, tests or a run: only a passing check after the last change verifies it."""
        return bool(self.kinds & CHECKED_KINDS)

    @property
    def places(self) -> tuple[str, ...]:
        """Where the task said the work goes: the files it names to write, edit or remove."""
        return unique_paths(f.path for f in self.files if f.role in PLACE_ROLES)

    def is_place(self, path: str) -> bool:
        """True when ``path`` is one of :attr:`places`, or of the numbered series one names
        ("part0.txt to part3.txt": ``part2.txt``, same folder and suffix)."""
        return any(same_file(place, path) or _same_series(place, path) for place in self.places)

    def read_back_verifies(self, changed_paths: Iterable[str]) -> bool:
        """A read-back of the changed files verifies the task: it asks for content and no
        code, tests or run, every changed file is prose or data, and when the task named
        files, every changed file is one of them."""
        changed = list(changed_paths)
        if not changed or self.needs_check or "content" not in self.kinds:
            return False
        if not all(is_non_code_path(p) for p in changed):
            return False
        return not self.places or all(self.is_place(p) for p in changed)


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
