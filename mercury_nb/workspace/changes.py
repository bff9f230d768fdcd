"""The change summary: what the task changed on disk, measured against the start snapshot."""

from __future__ import annotations

import difflib
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mercury_nb.contract.notebook_changes import NotebookDiff
from mercury_nb.contract.outcome import FileChange
from mercury_nb.contract.redaction import known_secrets
from mercury_nb.contract.text_cut import clip
from mercury_nb.workspace import git_state
from mercury_nb.workspace.notebook_diff import notebook_change, preview_lines
from mercury_nb.workspace.snapshot import (
    FileState,
    Snapshot,
    is_skipped,
    read_state,
    state_from_bytes,
    walk_files,
)

PREVIEW_MAX_CHARS = 400
PREVIEW_MAX_LINES = 8
PREVIEW_LINE_CHARS = 120
DIFF_MAX_CHARS = 20_000
"""A file's unified diff is cut after this many characters (with a marker saying so)."""
_EXACT_DIFF_MAX_CELLS = 25_000_000
"""Above this many line pairs (after trimming common ends) counts use a multiset estimate."""


@dataclass(frozen=True)
class ChangeReport:
    """Per-file changes, how they were verified, and whether the measurement saw everything."""

    changes: list[FileChange]
    verified_by: Literal["git", "snapshot"]
    complete: bool = True
    """False when caps or a git failure kept part of the workspace out of view."""

    @property
    def unchanged(self) -> bool:
        """True only when the whole workspace was seen and nothing changed."""
        return self.complete and not self.changes


def measure_changes(snapshot: Snapshot, root: Path | None = None) -> ChangeReport:
    """Compare the workspace now with ``snapshot``. ``root`` defaults to the snapshot's root."""
    if snapshot.git is not None:
        return _measure_git(snapshot)
    return _measure_content(snapshot, Path(root) if root is not None else Path(snapshot.root))


def describe_change(
    path: str, before: FileState | None, after: FileState | None
) -> FileChange | None:
    """The FileChange between two states of one file, or None when they are the same."""
    if before is None and after is None:
        return None
    if before is not None and after is not None:
        if before.sha256 == after.sha256:
            return None
        if (
            before.text is not None
            and after.text is not None
            and _lines(before.text) == _lines(after.text)
        ):
            return None  # only line endings differ (e.g. git's autocrlf)
    if before is None:
        assert after is not None
        if after.text is None:
            return _unmeasured(path, "created", after)
        lines = _lines(after.text)
        notebook = notebook_change(path, None, after.text)
        return FileChange(
            path=path, added=len(lines), removed=0, kind="created",
            preview=_notebook_preview(notebook) if notebook is not None else _preview(lines, []),
            diff=unified_diff(path, [], lines, created=True), size=after.size,
            notebook=notebook,
        )
    if after is None:
        if before.text is None:
            return _unmeasured(path, "deleted", before)
        lines = _lines(before.text)
        return FileChange(
            path=path, added=0, removed=len(lines), kind="deleted", preview=_preview([], lines),
            diff=unified_diff(path, lines, [], deleted=True), size=before.size,
        )
    if before.text is None or after.text is None:
        preview = f"{_opaque(after)} (was {before.size} bytes)"
        return FileChange(path=path, added=0, removed=0, kind="modified", preview=preview,
                          measured=False, size=after.size, binary=after.binary)
    old, new = _lines(before.text), _lines(after.text)
    added, removed = diff_lines(old, new)
    notebook = notebook_change(path, before.text, after.text)
    return FileChange(
        path=path,
        added=len(added),
        removed=len(removed),
        kind="modified",
        preview=_notebook_preview(notebook) if notebook is not None else _preview(added, removed),
        diff=unified_diff(path, old, new),
        size=after.size,
        notebook=notebook,
    )


def _unmeasured(path: str, kind: Literal["created", "deleted"], state: FileState) -> FileChange:
    return FileChange(path=path, added=0, removed=0, kind=kind, preview=_opaque(state),
                      measured=False, size=state.size, binary=state.binary)


def unified_diff(path: str, old: list[str], new: list[str], *, created: bool = False,
                 deleted: bool = False) -> str:
    """``old`` → ``new`` as a unified diff with 3 lines of context, cut after
    :data:`DIFF_MAX_CHARS` characters; empty when the files are too big to diff exactly."""
    if len(old) * len(new) > _EXACT_DIFF_MAX_CELLS:
        return ""
    lines = difflib.unified_diff(
        [_ended(line) for line in old], [_ended(line) for line in new],
        fromfile="/dev/null" if created else f"a/{path}",
        tofile="/dev/null" if deleted else f"b/{path}", n=3,
    )
    text = "".join(lines)
    if len(text) <= DIFF_MAX_CHARS:
        return text
    cut = text.rfind("\n", 0, DIFF_MAX_CHARS) + 1 or DIFF_MAX_CHARS
    return text[:cut] + f"… ({len(text) - cut} more characters of diff not shown)"


def _ended(line: str) -> str:
    return line if line.endswith("\n") else line + "\n"


def diff_lines(old: list[str], new: list[str]) -> tuple[list[str], list[str]]:
    """The added and removed lines turning ``old`` into ``new``, each in file order."""
    start = 0
    while start < len(old) and start < len(new) and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    mid_old, mid_new = old[start:end_old], new[start:end_new]
    if len(mid_old) * len(mid_new) > _EXACT_DIFF_MAX_CELLS:
        old_counts, new_counts = Counter(mid_old), Counter(mid_new)
        return _excess(mid_new, new_counts - old_counts), _excess(mid_old, old_counts - new_counts)
    added: list[str] = []
    removed: list[str] = []
    matcher = difflib.SequenceMatcher(None, mid_old, mid_new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed.extend(mid_old[i1:i2])
        if tag in ("replace", "insert"):
            added.extend(mid_new[j1:j2])
    return added, removed


def _excess(lines: list[str], extra: Counter[str]) -> list[str]:
    """The lines of ``lines`` that ``extra`` counts, first occurrences first."""
    picked: list[str] = []
    for line in lines:
        if extra[line] > 0:
            picked.append(line)
            extra[line] -= 1
    return picked


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").splitlines(keepends=True)


def _preview(added: list[str], removed: list[str]) -> str:
    shown = [f"+{ln}" for ln in added[:PREVIEW_MAX_LINES]]
    shown += [f"-{ln}" for ln in removed[: PREVIEW_MAX_LINES - len(shown)]]
    parts: list[str] = []
    for line in shown:
        line = line.rstrip("\r\n")
        parts.append(_clip(line, PREVIEW_LINE_CHARS))
    text = "\n".join(parts)
    more = len(added) + len(removed) - len(shown)
    if more > 0:
        text += f"\n… {more} more changed line{'s' if more != 1 else ''}"
    return _clip(text, PREVIEW_MAX_CHARS)


def _notebook_preview(notebook: NotebookDiff) -> str:
    """The cells changed, one line each (``cell 2 modified (code): +x = 2``), bounded."""
    lines = preview_lines(notebook)
    shown = [_clip(line, PREVIEW_LINE_CHARS) for line in lines[:PREVIEW_MAX_LINES]]
    if len(lines) > len(shown):
        shown.append(f"… {len(lines) - len(shown)} more")
    return _clip("\n".join(shown), PREVIEW_MAX_CHARS)


def _clip(text: str, limit: int) -> str:
    return clip(text, limit, known_secrets(None, os.environ))  # redacted before the cut


def _opaque(state: FileState) -> str:
    kind = "binary file" if state.binary else "large file, lines not counted"
    return f"({kind}, {state.size} bytes)"


def _measure_content(snapshot: Snapshot, root: Path) -> ChangeReport:
    changes: list[FileChange] = []
    complete = not snapshot.truncated
    seen: set[str] = set()
    new_files = 0
    for relative in walk_files(root):
        before = snapshot.files.get(relative)
        if before is None:
            if snapshot.truncated:
                continue
            new_files += 1
            if new_files > snapshot.max_files:
                complete = False
                continue
        seen.add(relative)
        after = read_state(root / relative, root=root, max_file_bytes=snapshot.max_file_bytes,
                           max_hash_bytes=snapshot.max_hash_bytes)
        change = describe_change(relative, before, after)
        if change is not None:
            changes.append(change)
    for relative, before in snapshot.files.items():
        if relative not in seen:
            after = read_state(root / relative, root=root, max_file_bytes=snapshot.max_file_bytes,
                           max_hash_bytes=snapshot.max_hash_bytes)
            change = describe_change(relative, before, after)
            if change is not None:
                changes.append(change)
    changes.sort(key=lambda c: c.path)
    return ChangeReport(changes=changes, verified_by="snapshot", complete=complete)


def _measure_git(snapshot: Snapshot) -> ChangeReport:
    baseline = snapshot.git
    assert baseline is not None
    repo = baseline.repo()
    complete = True
    candidates = set(baseline.dirty)
    try:
        candidates |= git_state.dirty_paths(repo)
        head_now = git_state.head_commit(repo)
        if head_now is not None and head_now != baseline.head:
            start = baseline.head or git_state.EMPTY_TREE
            candidates |= git_state.paths_changed_between(repo, start, head_now)
    except git_state.GitError:
        complete = False
    prefix = repo.prefix
    candidates = {
        p for p in candidates if p.startswith(prefix) and not is_skipped(p[len(prefix) :])
    }
    clean_at_start = sorted(p for p in candidates if p not in baseline.dirty)
    try:
        blobs = git_state.read_blobs(repo, baseline.head, clean_at_start,
                                     snapshot.max_file_bytes)
    except git_state.GitError:
        blobs, complete = {}, False
        candidates -= set(clean_at_start)
    changes: list[FileChange] = []
    for path in sorted(candidates):
        if path in baseline.dirty:
            before = baseline.dirty[path]
        else:
            blob = blobs.get(path)
            before = None
            if isinstance(blob, git_state.UnreadBlob):  # too large to read: size and id only
                before = FileState(size=blob.size, sha256=f"git-blob:{blob.oid}")
            elif blob is not None:
                before = state_from_bytes(blob, keep_text=len(blob) <= snapshot.max_file_bytes)
        after = read_state(repo.toplevel / path, root=repo.toplevel,
                           max_file_bytes=snapshot.max_file_bytes,
                           max_hash_bytes=snapshot.max_hash_bytes)
        change = describe_change(path[len(prefix) :], before, after)
        if change is not None:
            changes.append(change)
    return ChangeReport(changes=changes, verified_by="git", complete=complete)
