"""The start-of-task snapshot the change summary is measured against (git baseline or content)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.workspace import git_state

SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".ipynb_checkpoints", ".venv",
                          "venv", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
SKIPPED_SUFFIXES = (".pyc", "ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3-shm",
                    "ledger.sqlite3-journal")
"""File name endings the summary ignores: bytecode, and mercury's own work ledger (which is
written during the task when ``MERCURY_HOME`` lies inside the workspace)."""
DEFAULT_MAX_TEXT_BYTES = 64 * 1024 * 1024
"""Total text a snapshot keeps in memory; beyond it files are compared by hash only."""
_BINARY_SNIFF_BYTES = 8000
_SNAPSHOT_VERSION = 1


@dataclass(frozen=True)
class FileState:
    """One file as it was: size and hash always, the text when it is small text."""

    size: int
    sha256: str
    text: str | None = None
    binary: bool = False
    mtime_ns: int | None = None
    """When the file was last modified (None: unknown); lets a checkpoint tell cheaply
    which files may have changed since the snapshot."""

    @property
    def measurable(self) -> bool:
        """Whether line counts can be taken (text content is known)."""
        return self.text is not None


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

    def to_json(self) -> str:
        """A JSON document ``from_json`` turns back into an equal snapshot. ASCII only, so
        file names that are not UTF-8 (kept as surrogate escapes) survive any store."""
        return json.dumps({"version": _SNAPSHOT_VERSION, **asdict(self)}, ensure_ascii=True)

    def stored(self) -> Snapshot:
        """The form of this snapshot that is persisted: sizes and hashes for every file, and
        the "before" text only of files that changed since the snapshot (all a change
        summary needs). The contents of unchanged files never leave memory."""
        root = Path(self.root)

        def keep(path: Path, state: FileState) -> FileState:
            if state.text is None or _changed_on_disk(path, state):
                return state
            return replace(state, text=None)

        files = {rel: keep(root / rel, state) for rel, state in self.files.items()}
        git = self.git
        if git is not None:
            top = Path(git.toplevel)
            dirty = {
                rel: None if state is None else keep(top / rel, state)
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
        budget = _TextBudget(max(0, max_text_bytes - held))

        def fill(path: Path, state: FileState) -> FileState:
            if state.text is not None or state.binary or state.size > self.max_file_bytes:
                return state
            now = read_state(path, max_file_bytes=self.max_file_bytes, budget=budget)
            if now is None or now.text is None or now.sha256 != state.sha256:
                return state
            return replace(state, text=now.text)

        root = Path(self.root)
        files = {rel: fill(root / rel, state) for rel, state in self.files.items()}
        git = self.git
        if git is not None:
            top = Path(git.toplevel)
            git = replace(git, dirty={rel: None if state is None else fill(top / rel, state)
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


class _TextBudget:
    """How much text content a snapshot may still hold."""

    def __init__(self, max_bytes: int) -> None:
        self.left = max_bytes

    def take(self, size: int) -> bool:
        if size > self.left:
            return False
        self.left -= size
        return True


def state_from_bytes(
    data: bytes, *, keep_text: bool, mtime_ns: int | None = None
) -> FileState:
    """A FileState for ``data``; text is kept only when asked and the data is not binary."""
    binary = b"\0" in data[:_BINARY_SNIFF_BYTES]
    text = data.decode("utf-8", errors="replace") if keep_text and not binary else None
    return FileState(
        size=len(data), sha256=hashlib.sha256(data).hexdigest(), text=text, binary=binary,
        mtime_ns=mtime_ns,
    )


def _changed_on_disk(path: Path, state: FileState) -> bool:
    """Whether ``path`` may differ from ``state``: by size and mtime when both are known,
    else by hash. Unreadable or missing counts as changed."""
    try:
        info = os.lstat(path)
    except OSError:
        return True
    if (state.mtime_ns, state.size) == (info.st_mtime_ns, info.st_size):
        return False
    now = read_state(path, max_file_bytes=max(state.size, 1))
    return now is None or now.sha256 != state.sha256


def read_state(
    path: Path, *, max_file_bytes: int, budget: _TextBudget | None = None
) -> FileState | None:
    """The state of ``path`` on disk now; None when it is absent or not a regular file/link.

    A symlink is recorded by its target text (as git does). Files over ``max_file_bytes``
    are hashed in chunks and keep no text.
    """
    try:
        if path.is_symlink():
            return state_from_bytes(os.fsencode(os.readlink(path)), keep_text=True)
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return None  # a FIFO, socket or device is never opened (it could block)
        if info.st_size > max_file_bytes:
            return replace(_hashed_large_file(path), mtime_ns=info.st_mtime_ns)
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return None  # unreadable (permissions, a race): not tracked rather than a crash
    keep = len(data) <= max_file_bytes and (budget is None or budget.take(len(data)))
    return state_from_bytes(data, keep_text=keep, mtime_ns=info.st_mtime_ns)


def _hashed_large_file(path: Path) -> FileState:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        first = True
        binary = False
        while chunk := handle.read(1 << 20):
            if first:
                binary = b"\0" in chunk[:_BINARY_SNIFF_BYTES]
                first = False
            digest.update(chunk)
            size += len(chunk)
    return FileState(size=size, sha256=digest.hexdigest(), binary=binary)


def is_skipped(relative: str) -> bool:
    """Whether a workspace-relative posix path is noise the summary ignores (caches, venvs)."""
    parts = relative.split("/")
    return any(part in SKIPPED_DIRS for part in parts[:-1]) or parts[-1].endswith(SKIPPED_SUFFIXES)


def walk_files(root: Path) -> Iterator[str]:
    """Workspace-relative posix paths of files under ``root``, sorted, skipping noise."""
    for folder, dirnames, filenames in os.walk(root):
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
    budget = _TextBudget(max_text_bytes)
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
            )
    files: dict[str, FileState] = {}
    truncated = False
    for relative in walk_files(root):
        if len(files) >= config.snapshot_max_files:
            truncated = True
            break
        state = read_state(
            root / relative, max_file_bytes=config.snapshot_max_file_bytes, budget=budget
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
    )


def _git_baseline(repo: git_state.Repo, config: MercuryConfig, budget: _TextBudget) -> GitBaseline:
    head = git_state.head_commit(repo)
    dirty: dict[str, FileState | None] = {}
    for path in sorted(git_state.dirty_paths(repo)):
        if is_skipped(path[len(repo.prefix) :]):
            continue
        dirty[path] = read_state(
            repo.toplevel / path, max_file_bytes=config.snapshot_max_file_bytes, budget=budget
        )
    return GitBaseline(toplevel=str(repo.toplevel), prefix=repo.prefix, head=head, dirty=dirty)
