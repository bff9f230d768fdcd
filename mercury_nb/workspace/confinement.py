"""Workspace confinement: every tool path resolves inside the workspace root or is refused."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from mercury_nb.workspace.errors import WorkspaceError

_BYTE_ESCAPE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")


def _undecodable_name(shown: str, root: Path) -> str:
    """``shown`` with ``\\xff``-style escapes turned back into the bytes they stand for,
    when only that form names an existing file: list_dir shows a name that is not UTF-8
    (``bad\\xffname.txt``) that way, and the model must be able to use it."""
    if "\\x" not in shown:
        return shown
    raw = _BYTE_ESCAPE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), shown)
    if raw == shown or os.path.lexists(root / shown) or not os.path.lexists(root / raw):
        return shown
    return raw


class Workspace:
    """The folder the agent may touch. ``resolve`` turns a model-given path into a safe one."""

    def __init__(self, root: Path | str) -> None:
        self.root: Path = Path(root).expanduser().resolve()

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def resolve(self, path: str, *, follow_final_symlink: bool = True) -> Path:
        """The absolute, symlink-resolved path for ``path``, refused if it leaves the root.

        Relative paths are taken from the root. ``..`` escapes, absolute paths outside the
        root and symlinks that point outside it all raise ``WorkspaceError``. With
        ``follow_final_symlink=False`` the last component is kept as is (to delete a link
        rather than its target); its parent is still resolved and checked.
        """
        shown = str(path)
        if not shown.strip():
            raise WorkspaceError(
                "path is empty: give a path relative to the workspace, e.g. notes.txt")
        if "\x00" in shown:
            raise WorkspaceError(f"path contains a NUL byte: {shown!r}")
        if shown.startswith("~"):
            raise WorkspaceError(
                f"path escapes the workspace: {shown} (home-relative paths are not allowed; "
                "use a path relative to the workspace)"
            )
        given = Path(_undecodable_name(shown, self.root))
        lexical = Path(os.path.normpath(given if given.is_absolute() else self.root / given))
        lexically_inside = self._inside(lexical)
        if not lexically_inside and not given.is_absolute():
            raise WorkspaceError(f"path escapes the workspace: {shown}")
        try:
            if follow_final_symlink or lexical == self.root:
                resolved = lexical.resolve()
            else:
                resolved = lexical.parent.resolve() / lexical.name
        except (OSError, RuntimeError) as exc:
            raise WorkspaceError(f"cannot resolve path {shown}: {exc}") from exc
        if not self._inside(resolved):
            if lexically_inside:
                raise WorkspaceError(
                    f"path escapes the workspace: {shown} "
                    "(a symlink on the way points outside the workspace)"
                )
            raise WorkspaceError(f"path escapes the workspace: {shown}")
        return resolved

    def rel(self, path: Path | str) -> str:
        """``path`` relative to the root in posix style (``.`` for the root itself)."""
        absolute = Path(path)
        if not absolute.is_absolute():
            absolute = self.root / absolute
        try:
            relative = absolute.relative_to(self.root)
        except ValueError:
            try:
                relative = absolute.resolve().relative_to(self.root)
            except (ValueError, OSError, RuntimeError):
                return absolute.as_posix()
        return PurePosixPath(*relative.parts).as_posix() if relative.parts else "."

    def _inside(self, path: Path) -> bool:
        return path == self.root or self.root in path.parents
