"""What undo needs of a task, kept under ``home``: changed files' states and "before" bytes.

At the end of a task (and of each resumed run) :func:`keep_task_states` records, for every
file the change summary names, the hash before the task, the hash at its end, and the
"before" content itself (a notebook's end content too, for the undo cell by cell in the open
document) in a content store (``home/.mercury-undo/blobs/<sha256>``), bounded by
``undo_max_bytes``. The "before" bytes come from the start snapshot's kept text (checked
against its hash, so a lossy decode is never restored) or, in a git workspace, from the
baseline commit, or from the copy a tool's first write of it made (``before_copies``: a file
the snapshot could not keep). A file whose bytes cannot be kept is recorded with the reason.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from mercury_nb.contract.undo_plan import TOO_LARGE
from mercury_nb.workspace import git_state
from mercury_nb.workspace.atomic import atomic_write_bytes
from mercury_nb.workspace.changes import ChangeReport
from mercury_nb.workspace.file_state import DEFAULT_MAX_HASH_BYTES, read_state
from mercury_nb.workspace.reading import read_bounded
from mercury_nb.workspace.snapshot import FileState, Snapshot

NOT_KEPT_BINARY = "binary, not kept outside git"
NOT_KEPT_UNREAD = "not kept (it could not be read as it was)"
NOT_KEPT_LARGE = (TOO_LARGE + " outside git (over the {size} of a file the start snapshot "
                  "keeps: MERCURY_SNAPSHOT_MAX_FILE_BYTES)")
_VERSION = 1


@dataclass(frozen=True)
class KeptFile:
    """One changed file as undo knows it (hashes; None: absent)."""

    before: str | None
    end: str | None
    unkept: str | None = None


@dataclass(frozen=True)
class TaskStates:
    """The files one task changed, below ``root``."""

    root: str
    files: dict[str, KeptFile]


UNDO_DIR = ".mercury-undo"
"""The store's folder under ``home`` (the change summary skips a folder of this name)."""


def undo_dir(home: Path | str) -> Path:
    return Path(home) / UNDO_DIR


def put_blob(home: Path | str, data: bytes) -> str:
    """Keep ``data`` in the content store; returns its sha256."""
    sha = hashlib.sha256(data).hexdigest()
    path = undo_dir(home) / "blobs" / sha
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write_bytes(path, data)
        with contextlib.suppress(OSError):
            os.chmod(path, 0o600)  # a copy of workspace content: the owner's only
    return sha


def get_blob(home: Path | str, sha: str) -> bytes | None:
    """The kept bytes with this sha256, or None (missing, or not matching any more)."""
    try:
        data = (undo_dir(home) / "blobs" / sha).read_bytes()
    except (OSError, ValueError):
        return None
    return data if hashlib.sha256(data).hexdigest() == sha else None


def save_states(home: Path | str, task_id: str, states: TaskStates) -> None:
    files = {p: {"before": f.before, "end": f.end, "unkept": f.unkept}
             for p, f in states.files.items()}
    text = json.dumps({"version": _VERSION, "root": states.root, "files": files})
    path = undo_dir(home) / "tasks" / f"{task_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write_bytes(path, text.encode("utf-8"))


def load_states(home: Path | str, task_id: str) -> TaskStates | None:
    """The states kept for ``task_id``, or None when it kept none (or they are unreadable)."""
    try:
        data = json.loads((undo_dir(home) / "tasks" / f"{task_id}.json").read_text("utf-8"))
        files = {p: KeptFile(f["before"], f["end"], f["unkept"]) for p, f in data["files"].items()}
        return TaskStates(str(data["root"]), files)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def current_hash(root: Path, path: str, max_hash_bytes: int = DEFAULT_MAX_HASH_BYTES
                 ) -> str | None:
    """The hash of ``path`` (below ``root``) on disk now; None when absent."""
    state = read_state(root / path, root=root, max_file_bytes=1024,
                       max_hash_bytes=max_hash_bytes)
    return None if state is None else state.sha256


def keep_task_states(snapshot: Snapshot, report: ChangeReport, home: Path | str,
                     task_id: str, max_bytes: int,
                     copies: Mapping[str, str] | None = None) -> TaskStates:
    """Record what undo needs of the files ``report`` names (merged with what an earlier run
    of the same task kept: the first "before" stays). ``copies``: path -> sha256 of the
    "before" bytes a tool's first write kept in the store (``before_copies``), for files
    whose bytes the snapshot lacks. Returns what was saved."""
    root = Path(snapshot.root)
    earlier = load_states(home, task_id)
    files = dict(earlier.files) if earlier is not None else {}
    befores = before_states(snapshot, [c.path for c in report.changes if c.path not in files],
                            max_bytes)
    for path, sha in (copies or {}).items():
        state, data = befores.get(path, (None, None))
        if state is not None and data is None and state.sha256 == sha:
            befores[path] = (state, get_blob(home, sha))
    left = max_bytes - sum(_kept_size(home, f) for f in files.values())
    for change in report.changes:
        path = change.path
        if path in files:
            before, unkept = files[path].before, files[path].unkept
        else:
            state, data = befores.get(path, (None, None))
            before = None if state is None else state.sha256
            unkept = (None if state is None
                      else _why_unkept(state, data, left, snapshot.max_file_bytes))
            if state is not None and unkept is None and data is not None:
                put_blob(home, data)
                left -= len(data)
        if before is not None and unkept is None:
            end, left = _end_state(home, root, path, left, snapshot.max_hash_bytes)
        else:  # no undo cell by cell without its "before": the hash is enough
            end = current_hash(root, path, snapshot.max_hash_bytes)
        files[path] = KeptFile(before, end, unkept)
    states = TaskStates(str(root), files)
    save_states(home, task_id, states)
    return states


def _end_state(home: Path | str, root: Path, path: str, left: int, max_hash_bytes: int
               ) -> tuple[str | None, int]:
    """The file's hash now; a notebook's bytes are kept too (within ``left``), so its undo
    can go cell by cell in the open document. The hash, and the budget left."""
    if not path.endswith(".ipynb"):
        return current_hash(root, path, max_hash_bytes), left
    try:
        data = read_bounded(root, root / path, min(left, max_hash_bytes))
    except (OSError, ValueError):  # absent, or over the budget: its hash only
        return current_hash(root, path, max_hash_bytes), left
    sha = hashlib.sha256(data).hexdigest()
    if get_blob(home, sha) is None:
        put_blob(home, data)
        left -= len(data)
    return sha, left


def _why_unkept(state: FileState, data: bytes | None, left: int,
                snapshot_max: int) -> str | None:
    if state.size > left:
        return TOO_LARGE
    if data is None and state.size > snapshot_max and not state.sha256.startswith("git:"):
        mib = snapshot_max / 2**20
        return NOT_KEPT_LARGE.format(size=f"{mib:g} MiB" if mib >= 1 else f"{snapshot_max:,} bytes")
    if data is None:
        return NOT_KEPT_BINARY if state.binary else NOT_KEPT_UNREAD
    return None


def _kept_size(home: Path | str, file: KeptFile) -> int:
    if file.before is None or file.unkept is not None:
        return 0
    with contextlib.suppress(OSError):
        return (undo_dir(home) / "blobs" / file.before).stat().st_size
    return 0


def before_states(snapshot: Snapshot, paths: list[str], max_bytes: int
                   ) -> dict[str, tuple[FileState | None, bytes | None]]:
    """Each path's state before the task and its exact bytes when known."""
    found: dict[str, tuple[FileState | None, bytes | None]] = {}
    if snapshot.git is None:
        for path in paths:
            state = snapshot.files.get(path)
            found[path] = (state, exact_bytes(state))
        return found
    baseline = snapshot.git
    repo = baseline.repo()
    clean = [repo.prefix + p for p in paths if repo.prefix + p not in baseline.dirty]
    try:
        blobs = git_state.read_blobs(repo, baseline.head, clean, max_bytes)
    except git_state.GitError:
        blobs = {}
    for path in paths:
        full = repo.prefix + path
        if full in baseline.dirty:
            dirty = baseline.dirty[full]
            found[path] = (dirty, exact_bytes(dirty))
            continue
        blob = blobs.get(full)
        if blob is None:
            found[path] = (None, None) if full in blobs else (_unknown(), None)
        elif isinstance(blob, git_state.UnreadBlob):  # over the bound: never read, too large
            found[path] = (FileState(blob.size, f"git:{blob.oid}"), None)
        else:
            found[path] = (FileState(len(blob), hashlib.sha256(blob).hexdigest()), blob)
    return found


def _unknown() -> FileState:
    """A file that existed before but whose state git could not give."""
    return FileState(size=0, sha256="unknown")


def exact_bytes(state: FileState | None) -> bytes | None:
    """The state's kept text as bytes, when they hash to the state's own hash."""
    if state is None or state.text is None:
        return None
    data = state.text.encode("utf-8", "surrogateescape")
    return data if hashlib.sha256(data).hexdigest() == state.sha256 else None


def prune_store(home: Path | str, known: Callable[[list[str]], Iterable[str]], now: float,
                min_age_s: float = 3600.0) -> int:
    """Drop what the ledger no longer knows: the index of each task ``known`` does not name,
    then every blob no index refers to and older than ``min_age_s`` (a task that has just
    kept a blob writes its index a moment later). Returns how many files went."""
    tasks = undo_dir(home) / "tasks"
    try:
        indexed = sorted(path.stem for path in tasks.glob("*.json"))
    except OSError:
        return 0
    alive = set(known(indexed))
    gone = 0
    for task_id in indexed:
        if task_id not in alive:
            with contextlib.suppress(OSError):
                (tasks / f"{task_id}.json").unlink()
                gone += 1
    used = {sha for task_id in alive if (states := load_states(home, task_id))
            for file in states.files.values() for sha in (file.before, file.end) if sha}
    for blob in (undo_dir(home) / "blobs").glob("*"):
        with contextlib.suppress(OSError):
            if blob.name not in used and now - blob.stat().st_mtime >= min_age_s:
                blob.unlink()
                gone += 1
    return gone
