"""Read-only git queries for the change summary: repo discovery, status, HEAD and blobs."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mercury_nb.contract.command_env import command_environment

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""The empty tree object: the start point for a repository with no commit yet."""

_GIT_TIMEOUT_S = 60.0


class GitError(Exception):
    """A git command failed or git is not installed."""


@dataclass(frozen=True)
class Repo:
    """A git work tree and where the workspace sits inside it."""

    toplevel: Path
    prefix: str
    """The workspace root relative to ``toplevel`` in posix style: ``""`` or ``"sub/dir/"``."""

    def pathspec(self) -> list[str]:
        """Arguments limiting a git command to the workspace (after ``--``)."""
        return [f":(top,literal){self.prefix}"] if self.prefix else []


_NO_PROGRAMS = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")
"""What a repository's own config could make git start (its ``core.fsmonitor`` runs on
``git status``): mercury's own git reads start none of it. A command of the task (even one
in the sandbox, where the workspace and its ``.git`` are writable) could have planted it."""


def run_git(args: list[str], cwd: Path, *, input_bytes: bytes | None = None) -> bytes:
    """Run ``git <args>`` in ``cwd`` without taking optional locks, starting none of the
    programs a repository's config names, with the environment a command gets (no
    secrets); stdout or ``GitError``."""
    env = {**command_environment(os.environ).env, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C",
           "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(
            ["git", *_NO_PROGRAMS, "-c", "core.quotepath=off", *args],
            cwd=cwd,
            input=input_bytes,
            capture_output=True,
            env=env,
            timeout=_GIT_TIMEOUT_S,
            check=False,
            stdin=None if input_bytes is not None else subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git {args[0]}: {exc}") from exc
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip()
        raise GitError(f"git {args[0]} exited {done.returncode}: {message}")
    return done.stdout


def find_repo(root: Path) -> Repo | None:
    """The work tree containing ``root``, or None outside git (or when git is unusable)."""
    try:
        out = run_git(
            ["rev-parse", "--is-inside-work-tree", "--show-toplevel", "--show-prefix"], root
        )
    except GitError:
        return None
    lines = os.fsdecode(out).split("\n")
    if len(lines) < 3 or lines[0] != "true":
        return None
    repo = Repo(toplevel=Path(lines[1]), prefix=lines[2])
    if repo.prefix and _is_ignored(repo):
        return None  # git cannot see inside an ignored folder; a content snapshot can
    return repo


def _is_ignored(repo: Repo) -> bool:
    try:
        run_git(["check-ignore", "-q", "--", repo.prefix.rstrip("/")], repo.toplevel)
    except GitError:
        return False
    return True


def head_commit(repo: Repo) -> str | None:
    """The commit HEAD points at, or None on an unborn branch."""
    try:
        out = run_git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], repo.toplevel)
    except GitError:
        return None
    return out.decode().strip() or None


def dirty_paths(repo: Repo) -> set[str]:
    """Top-level-relative paths that differ from HEAD: modified, staged, deleted or untracked."""
    out = run_git(
        [
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=all",
            "--",
            *repo.pathspec(),
        ],
        repo.toplevel,
    )
    paths: set[str] = set()
    for entry in out.split(b"\0"):
        if len(entry) > 3:
            paths.add(os.fsdecode(entry[3:]))
    return paths


def is_ignored(repo: Repo, path: str) -> bool:
    """Whether the top-level-relative ``path`` is ignored by git (``.gitignore``): ``git
    status`` never lists it, changed or not. False when git cannot say."""
    try:
        run_git(["check-ignore", "-q", "--", path], repo.toplevel)
    except GitError:  # exit 1: not ignored (or git failed: as if not)
        return False
    return True


def paths_changed_between(repo: Repo, old: str, new: str) -> set[str]:
    """Top-level-relative paths whose content differs between two commits (or trees)."""
    out = run_git(
        [
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--ignore-submodules=all",
            old,
            new,
            "--",
            *repo.pathspec(),
        ],
        repo.toplevel,
    )
    return {os.fsdecode(part) for part in out.split(b"\0") if part}


@dataclass(frozen=True)
class UnreadBlob:
    """A blob over the read bound: known by its size and object id, never read."""

    size: int
    oid: str


def read_blobs(repo: Repo, rev: str | None, paths: list[str],
               max_bytes: int) -> dict[str, bytes | UnreadBlob | None]:
    """The content of each path at ``rev`` (None where absent or not a regular blob).

    Sizes are asked first (``cat-file --batch-check``); only blobs of at most ``max_bytes``
    are then read, by object id, so a huge committed file never enters memory: it is an
    :class:`UnreadBlob`. What is held is at most ``max_bytes`` per path."""
    found: dict[str, bytes | UnreadBlob | None] = dict.fromkeys(paths)
    if rev is None or not paths:
        return found
    batchable = [p for p in paths if "\n" not in p]
    request = "".join(f"{rev}:{p}\n" for p in batchable).encode("utf-8", "surrogateescape")
    checked = run_git(["cat-file", "--batch-check"], repo.toplevel, input_bytes=request)
    small: list[tuple[str, str]] = []
    for path, line in zip(batchable, checked.split(b"\n"), strict=False):
        header = line.split()
        if len(header) == 3 and header[1] == b"blob":
            oid, size = header[0].decode("ascii"), int(header[2])
            if size <= max_bytes:
                small.append((path, oid))
            else:
                found[path] = UnreadBlob(size, oid)
    if not small:
        return found
    out = run_git(["cat-file", "--batch"], repo.toplevel,
                  input_bytes="".join(f"{oid}\n" for _, oid in small).encode("ascii"))
    pos = 0
    for path, _ in small:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            found[path] = out[pos : pos + size]
            pos += size + 1
    return found
