"""File tools: list_dir, read_file, create_file, write_file, edit_file, delete_file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from mercury_nb.contract.redaction import known_secrets
from mercury_nb.contract.text_cut import keep_head_and_tail
from mercury_nb.tools.base import ToolContext, ToolError, ToolResult
from mercury_nb.tools.budget import result_budget
from mercury_nb.tools.file_reading import (
    BINARY_SNIFF_BYTES,
    describe_binary,
    read_page,
    refuse_unreadable,
)
from mercury_nb.tools.function_tool import FunctionTool, workspace_of
from mercury_nb.tools.open_notebooks import refuse_if_open
from mercury_nb.workspace.atomic import atomic_write_text
from mercury_nb.workspace.confinement import Workspace
from mercury_nb.workspace.dirfd import list_folder, unlink_at
from mercury_nb.workspace.reading import FileTooLarge, looks_binary, open_file, read_upto

_PATH_HELP = "Path relative to the workspace root."


class ListDirArgs(BaseModel):
    path: str = Field(default=".", description="Folder relative to the workspace root.")


class PathArgs(BaseModel):
    path: str = Field(description=_PATH_HELP)


class ReadArgs(BaseModel):
    path: str = Field(description=_PATH_HELP)
    offset: int = Field(default=1, ge=1, description="First line to read (1-based).")
    limit: int | None = Field(
        default=None, ge=1, description="Most lines to read (default: as many as fit)."
    )


class ContentArgs(BaseModel):
    path: str = Field(description=_PATH_HELP)
    content: str = Field(description="The complete file content.")


class EditArgs(BaseModel):
    path: str = Field(description=_PATH_HELP)
    old_text: str = Field(
        description="Exact text to replace; must occur exactly once. Empty: append new_text."
    )
    new_text: str = Field(description="Replacement text.")


def head_tail(text: str, limit: int, what: str = "characters",
              secrets: tuple[str, ...] | None = None) -> str:
    """``text`` whole when short, else its first and last ``limit`` characters (half each)
    around a marker naming the cut, redacted before the cut (``secrets``: by default the
    secret-named environment variables' values)."""
    known = known_secrets(None, os.environ) if secrets is None else secrets
    return keep_head_and_tail(text, limit, lambda cut: f"[… {cut} {what} omitted …]", known)


def line_count(text: str) -> int:
    return len(text.splitlines())


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def read_text(ws: Workspace, path: Path, shown: str, max_bytes: int) -> str:
    """The UTF-8 text of an existing regular file (opened through the workspace's directory
    fds, never through a link), refusing folders, FIFOs, devices and binary content politely,
    and a file over ``max_bytes`` by its size, before its content is read."""
    try:
        with open_file(ws.root, path) as (fd, size):
            head = read_upto(fd, BINARY_SNIFF_BYTES)
            if looks_binary(head):
                raise ToolError(describe_binary(head, size, shown)
                                + " Only text files can be edited.")
            if size > max_bytes:
                raise FileTooLarge(size, max_bytes)
            data = head + read_upto(fd, max_bytes + 1 - len(head))
            if len(data) > max_bytes:
                raise FileTooLarge(len(data), max_bytes)
    except FileTooLarge as error:
        raise ToolError(
            f"{shown} is too large to read whole: {error.strerror} (MERCURY_FILE_READ_MAX_BYTES); "
            "nothing was read. Read parts of it with read_file (offset, limit) and change it "
            "with run_command."
        ) from error
    except OSError as error:
        raise refuse_unreadable(error, shown) from error
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def _write(ws: Workspace, path: Path, text: str, shown: str, *, make_parents: bool) -> None:
    """Write ``text`` atomically through the workspace's directory fds (no symlink races)."""
    try:
        atomic_write_text(path, text, make_parents=make_parents, root=ws.root)
    except OSError as error:
        raise refuse_unreadable(error, shown) from error


def list_dir(args: ListDirArgs, ctx: ToolContext) -> ToolResult:
    ws = workspace_of(ctx)
    folder = ws.resolve(args.path)
    shown = ws.rel(folder)
    if not folder.exists():
        raise ToolError(f"no such directory: {args.path}")
    if not folder.is_dir():
        raise ToolError(f"not a directory: {args.path} — use read_file to read a file")
    try:
        entries = list_folder(ws.root, folder)
    except OSError as error:
        raise refuse_unreadable(error, shown) from error
    cap = ctx.config.list_dir_max_entries
    lines = [f"{'dir' if is_dir else 'file'}: {name}" for name, is_dir in entries[:cap]]
    if len(entries) > cap:
        lines.append(f"[… {len(entries) - cap} more entries not shown]")
    if not lines:
        lines.append(f"({shown} is empty)")
    return ToolResult(ok=True, content="\n".join(lines))


def read_file(args: ReadArgs, ctx: ToolContext) -> ToolResult:
    ws = workspace_of(ctx)
    path = ws.resolve(args.path)
    page = read_page(ws.root, path, ws.rel(path), offset=args.offset, limit=args.limit,
                     budget=result_budget(ctx), scan_bytes=ctx.config.read_file_max_scan_bytes,
                     secrets=known_secrets(ctx.config, os.environ))
    return ToolResult(ok=True, content=page.content(), read_paths=(ws.rel(path),))


def create_file(args: ContentArgs, ctx: ToolContext) -> ToolResult:
    ws = workspace_of(ctx)
    path = ws.resolve(args.path)
    if path.exists() or path.is_symlink():
        raise ToolError(
            f"{args.path} already exists — use write_file to replace it or edit_file to change it"
        )
    _write(ws, path, args.content, args.path, make_parents=True)
    rel = ws.rel(path)
    summary = f"created {rel} ({_plural(line_count(args.content), 'line')})"
    return ToolResult(ok=True, content=summary, changed_paths=(rel,))


def write_file(args: ContentArgs, ctx: ToolContext) -> ToolResult:
    ws = workspace_of(ctx)
    path = ws.resolve(args.path)
    refuse_if_open(ctx, path, ws.rel(path))
    if path.is_dir():
        raise ToolError(f"{args.path} is a directory; give a file path")
    existed = path.exists()
    _write(ws, path, args.content, args.path, make_parents=True)
    rel = ws.rel(path)
    verb = "overwrote" if existed else "created"
    summary = f"{verb} {rel} ({_plural(line_count(args.content), 'line')})"
    return ToolResult(ok=True, content=summary, changed_paths=(rel,))


def _occurrences(text: str, needle: str) -> list[int]:
    """Every start index of ``needle`` in ``text``, overlapping ones included."""
    found: list[int] = []
    index = text.find(needle)
    while index != -1:
        found.append(index)
        index = text.find(needle, index + 1)
    return found


def edit_file(args: EditArgs, ctx: ToolContext) -> ToolResult:
    ws = workspace_of(ctx)
    path = ws.resolve(args.path)
    if not path.exists():
        raise ToolError(f"no such file: {args.path} — use create_file to create it")
    rel = ws.rel(path)
    refuse_if_open(ctx, path, rel)
    text = read_text(ws, path, args.path, ctx.config.file_read_max_bytes)
    if args.old_text == "":
        _write(ws, path, text + args.new_text, args.path, make_parents=False)
        note = ""
        if text and not text.endswith("\n") and args.new_text:
            note = " (the file did not end with a newline, so the text continues its last line)"
        added = _plural(line_count(args.new_text), "line")
        return ToolResult(ok=True, content=f"appended {added} to {rel}{note}", changed_paths=(rel,))
    old_text, new_text = args.old_text, args.new_text
    hits = _occurrences(text, old_text)
    if not hits and "\r\n" in text and "\n" in old_text and "\r\n" not in old_text:
        old_text, new_text = old_text.replace("\n", "\r\n"), new_text.replace("\n", "\r\n")
        hits = _occurrences(text, old_text)
    if not hits:
        raise ToolError(
            f"old_text was not found in {rel} — read the file again and copy the exact text, "
            "including whitespace and indentation"
        )
    if len(hits) > 1:
        raise ToolError(
            f"old_text occurs {len(hits)} times in {rel}; it must occur exactly once — "
            "include more surrounding lines to make it unique"
        )
    if old_text == new_text:
        return ToolResult(ok=True, content=f"old_text and new_text are identical; {rel} unchanged")
    start = hits[0]
    _write(ws, path, text[:start] + new_text + text[start + len(old_text) :], args.path,
           make_parents=False)
    summary = (
        f"edited {rel}: replaced {_plural(line_count(old_text), 'line')} "
        f"with {_plural(line_count(new_text), 'line')}"
    )
    return ToolResult(ok=True, content=summary, changed_paths=(rel,))


def delete_file(args: PathArgs, ctx: ToolContext) -> ToolResult:
    ws = workspace_of(ctx)
    path = ws.resolve(args.path, follow_final_symlink=False)
    refuse_if_open(ctx, path, ws.rel(path))
    if path == ws.root or (path.is_dir() and not path.is_symlink()):
        raise ToolError(
            f"{args.path} is a directory; delete_file removes files only "
            "(use run_command to remove a directory)"
        )
    if not path.exists() and not path.is_symlink():
        raise ToolError(f"no such file: {args.path}")
    try:
        unlink_at(ws.root, path)
    except OSError as error:
        raise refuse_unreadable(error, args.path) from error
    rel = ws.rel(path)
    return ToolResult(ok=True, content=f"deleted {rel}", changed_paths=(rel,))


FILE_TOOLS: tuple[FunctionTool[Any], ...] = (
    FunctionTool(
        name="list_dir",
        description="List a folder of the workspace: one 'dir: name' or 'file: name' per line.",
        brief="List a folder.",
        args_model=ListDirArgs,
        handler=list_dir,
    ),
    FunctionTool(
        name="read_file",
        description=(
            "Read a text file of the workspace. Long files come in pages of lines: the result "
            "says which lines it holds and the offset to read on; use offset/limit (lines, "
            "1-based) to read a part. Binary files are described, not shown."
        ),
        brief="Read a text file; offset and limit are lines.",
        args_model=ReadArgs,
        handler=read_file,
    ),
    FunctionTool(
        name="create_file",
        description="Create a new file (parent folders too). Fails if the file already exists.",
        brief="Create a new file.",
        args_model=ContentArgs,
        handler=create_file,
        mutating=True,
    ),
    FunctionTool(
        name="write_file",
        description="Write a file with the given content, replacing it if it exists.",
        brief="Write a whole file, replacing it.",
        args_model=ContentArgs,
        handler=write_file,
        mutating=True,
    ),
    FunctionTool(
        name="edit_file",
        description=(
            "Replace old_text with new_text in an existing file. old_text must occur exactly "
            "once. An empty old_text appends new_text at the end of the file."
        ),
        brief="Replace old_text (found once) with new_text; empty old_text appends.",
        args_model=EditArgs,
        handler=edit_file,
        mutating=True,
    ),
    FunctionTool(
        name="delete_file",
        description="Delete a file of the workspace (not a folder).",
        brief="Delete a file.",
        args_model=PathArgs,
        handler=delete_file,
        mutating=True,
    ),
)
