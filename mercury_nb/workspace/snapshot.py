"""The start-of-task snapshot the change summary is measured against (git baseline or content)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.workspace import git_state
from mercury_nb.workspace.file_state import (
    DEFAULT_MAX_HASH_BYTES,
    FileState,
    TextBudget,
    changed_on_disk,
    read_state,
    state_from_bytes,
)

__all__ = ["FileState", "Snapshot", "read_state", "state_from_bytes", "take_snapshot"]

SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".ipynb_checkpoints", ".venv",
                          "venv", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                          ".mercury-undo"})
"""Folders the summary never enters; ``.mercury-undo`` is undo's own store under
``MERCURY_HOME`` (written at a task's end, also when that home lies inside the workspace)."""
SKIPPED_SUFFIXES = (".pyc", "ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3-shm",
                    "ledger.sqlite3-journal", ".jupyter_ystore.db", ".jupyter_ystore.db-wal",
                    ".jupyter_ystore.db-shm", ".jupyter_ystore.db-journal")
"""File name endings the summary ignores: bytecode, mercury's own work ledger (which is
written during the task when ``MERCURY_HOME`` lies inside the workspace), and the store of
jupyter-collaboration's shared documents (written in the server root while a notebook is
open; never the task's change, and never restored by an undo)."""
DEFAULT_MAX_TEXT_BYTES = 64 * 1024 * 1024
"""Total text a snapshot keeps in memory; beyond it files are compared by hash only."""
_SNAPSHOT_VERSION = 1


@dataclass(frozen=True)
class GitBaseline:
    """The git side of a snapshot: HEAD and the state of every file dirty at start."""

    toplevel: str
    prefix: str
    head: str | None
    dirty: dict[str, FileState | None] = field(hash=False)
    """Top-level-relative path -> its state at start (None: absent, e.g. deleted)."""

    def repo(self) -> git_state.Repo:
        return git_state.Repo(toplevel=Path(self.toplevel), prefix=self.prefix)


@dataclass(frozen=True)
class Snapshot:
    """What the workspace looked like when the task started."""

    root: str
    kind: Literal["git", "snapshot"]
    max_file_bytes: int
    max_files: int
    files: dict[str, FileState] = field(default_factory=dict, hash=False)
    """Content mode: workspace-relative path -> state."""
    git: GitBaseline | None = None
    truncated: bool = False
    """Content mode: the file cap was reached, so files beyond it are not tracked."""
    max_hash_bytes: int = DEFAULT_MAX_HASH_BYTES
    """Files larger than this were not read, only their size and mtime recorded."""

    def to_json(self) -> str:
        """A JSON document ``from_json`` turns back into an equal snapshot. ASCII only, so
        file names that are not UTF-8 (kept as surrogate escapes) survive any store."""
        return json.dumps({"version": _SNAPSHOT_VERSION, **asdict(self)}, ensure_ascii=True)

    def stored(self) -> Snapshot:
        """The form of this snapshot that is persisted: sizes and hashes for every file, and
        the "before" text only of files that changed since the snapshot (all a change
        summary needs). The contents of unchanged files never leave memory."""
        root = Path(self.root)

        def keep(base: Path, path: Path, state: FileState) -> FileState:
            if state.text is None or changed_on_disk(path, state, root=base,
                                                     max_hash_bytes=self.max_hash_bytes):
                return state
            return replace(state, text=None)

        files = {rel: keep(root, root / rel, state) for rel, state in self.files.items()}
        git = self.git
        if git is not None:
            top = Path(git.toplevel)
            dirty = {
                rel: None if state is None else keep(top, top / rel, state)
                for rel, state in git.dirty.items()
            }
            git = replace(git, dirty=dirty)
        return replace(self, files=files, git=git)

    def rehydrated(self, max_text_bytes: int = DEFAULT_MAX_TEXT_BYTES) -> Snapshot:
        """This (restored) snapshot with the "before" text put back for every small text
        file that is still exactly as it was (same hash): :meth:`stored` left those texts
        out, and a file a resumed task changes for the first time then still gets its line
        counts and diff. Files that changed meanwhile, binaries and large files stay as
        stored. Reads the workspace (run it off the event loop)."""
        states = [*self.files.values(), *(self.git.dirty.values() if self.git else ())]
        held = sum(state.size for state in states if state is not None and state.text)
        budget = TextBudget(max(0, max_text_bytes - held))

        def fill(base: Path, path: Path, state: FileState) -> FileState:
            if state.text is not None or state.binary or state.size > self.max_file_bytes:
                return state
            now = read_state(path, root=base, max_file_bytes=self.max_file_bytes,
                             max_hash_bytes=self.max_hash_bytes, budget=budget)
            if now is None or now.text is None or now.sha256 != state.sha256:
                return state
            return replace(state, text=now.text)

        root = Path(self.root)
        files = {rel: fill(root, root / rel, state) for rel, state in self.files.items()}
        git = self.git
        if git is not None:
            top = Path(git.toplevel)
            git = replace(git, dirty={rel: None if state is None else fill(top, top / rel, state)
                                      for rel, state in git.dirty.items()})
        return replace(self, files=files, git=git)

    @classmethod
    def from_json(cls, raw: str) -> Snapshot:
        data = json.loads(raw)
        if data.pop("version", None) != _SNAPSHOT_VERSION:
            raise ValueError("unsupported snapshot version")
        git = data.pop("git")
        files = {path: FileState(**state) for path, state in data.pop("files").items()}
        baseline = None
        if git is not None:
            dirty = {p: None if s is None else FileState(**s) for p, s in git.pop("dirty").items()}
            baseline = GitBaseline(dirty=dirty, **git)
        return cls(files=files, git=baseline, **data)


def is_skipped(relative: str) -> bool:
    """Whether a workspace-relative posix path is noise the summary ignores (caches, venvs)."""
    parts = relative.split("/")
    return any(part in SKIPPED_DIRS for part in parts[:-1]) or parts[-1].endswith(SKIPPED_SUFFIXES)


def walk_files(root: Path) -> Iterator[str]:
    """Workspace-relative posix paths of files under ``root``, sorted, skipping noise."""
    for folder, dirnames, filenames, _ in os.fwalk(root):  # by dir fds: a link is never entered
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        base = Path(folder).relative_to(root)
        for name in sorted(filenames):
            if not name.endswith(SKIPPED_SUFFIXES):
                yield (base / name).as_posix()


def take_snapshot(
    root: Path, config: MercuryConfig, *, max_text_bytes: int = DEFAULT_MAX_TEXT_BYTES
) -> Snapshot:
    """Record the workspace at task start: a git baseline inside a repo, contents otherwise."""
    root = Path(root).resolve()
    budget = TextBudget(max_text_bytes)
    repo = git_state.find_repo(root)
    if repo is not None:
        try:
            baseline = _git_baseline(repo, config, budget)
        except git_state.GitError:
            baseline = None
        if baseline is not None:
            return Snapshot(
                root=str(root),
                kind="git",
                max_file_bytes=config.snapshot_max_file_bytes,
                max_files=config.snapshot_max_files,
                git=baseline,
                max_hash_bytes=config.snapshot_max_hash_bytes,
            )
    files: dict[str, FileState] = {}
    truncated = False
    for relative in walk_files(root):
        if len(files) >= config.snapshot_max_files:
            truncated = True
            break
        state = read_state(
            root / relative, root=root, max_file_bytes=config.snapshot_max_file_bytes,
            max_hash_bytes=config.snapshot_max_hash_bytes, budget=budget,
        )
        if state is not None:
            files[relative] = state
    return Snapshot(
        root=str(root),
        kind="snapshot",
        max_file_bytes=config.snapshot_max_file_bytes,
        max_files=config.snapshot_max_files,
        files=files,
        truncated=truncated,
        max_hash_bytes=config.snapshot_max_hash_bytes,
    )


def _git_baseline(repo: git_state.Repo, config: MercuryConfig, budget: TextBudget) -> GitBaseline:
    head = git_state.head_commit(repo)
    dirty: dict[str, FileState | None] = {}
    for path in sorted(git_state.dirty_paths(repo)):
        if is_skipped(path[len(repo.prefix) :]):
            continue
        dirty[path] = read_state(
            repo.toplevel / path, root=repo.toplevel,
            max_file_bytes=config.snapshot_max_file_bytes,
            max_hash_bytes=config.snapshot_max_hash_bytes, budget=budget,
        )
    return GitBaseline(toplevel=str(repo.toplevel), prefix=repo.prefix, head=head, dirty=dirty)
