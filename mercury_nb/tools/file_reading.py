"""read_file's reading: regular files only, streamed line pages within a character budget.

A file is opened through the workspace's directory fds (``workspace.dirfd``): a FIFO,
socket or device is refused before a byte is read, so nothing blocks or reads forever.
The text is streamed line by line (a line longer than the budget is read in chunks and
shown as head and tail), so a 200 MB file costs about one budget of memory. The result
says which lines it holds, what was cut, and the ``offset`` that reads on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from mercury_nb.contract.text_cut import CUT_REACH, cut_edges, keep_head_and_tail
from mercury_nb.tools.base import ToolError
from mercury_nb.workspace.dirfd import NotRegularFile, PathChanged, open_regular
from mercury_nb.workspace.reading import BINARY_SNIFF_BYTES

__all__ = ["BINARY_SNIFF_BYTES", "Page", "describe_binary", "read_page", "refuse_unreadable"]

_CHUNK = 1 << 20
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"%PDF", "PDF document"),
    (b"PK\x03\x04", "ZIP archive (or a format built on it: .docx, .xlsx, .whl, .jar)"),
    (b"\x1f\x8b", "gzip archive"),
    (b"\x7fELF", "ELF executable or library"),
    (b"SQLite format 3\x00", "SQLite database"),
)


@dataclass(frozen=True)
class Page:
    """What one read returns: the text and the note that goes under it (if any)."""

    text: str
    note: str = ""

    def content(self) -> str:
        return f"{self.text}\n{self.note}" if self.note else self.text


def refuse_unreadable(error: OSError, shown: str) -> ToolError:
    """The ToolError the model sees when ``shown`` cannot be opened safely."""
    if isinstance(error, NotRegularFile):
        if error.kind == "folder":
            return ToolError(f"{shown} is a directory — use list_dir to see what it contains")
        return ToolError(
            f"{shown} is a {error.kind}, not a regular file; read_file only reads regular "
            "files (reading it could block or never end)"
        )
    if isinstance(error, PathChanged):
        return ToolError(f"{shown} changed while it was being opened (a folder or file on the "
                         "way became a symlink); nothing was read or written")
    if isinstance(error, FileNotFoundError | NotADirectoryError):
        return ToolError(f"no such file: {shown}")
    if isinstance(error, IsADirectoryError):
        return ToolError(f"{shown} is a directory — use list_dir to see what it contains")
    return ToolError(f"cannot open {shown}: {error.strerror or error}")


def describe_binary(head: bytes, size: int, shown: str) -> str:
    """A description of a binary file instead of its bytes."""
    kind = next((name for magic, name in _MAGIC if head.startswith(magic)), "binary data")
    return (
        f"{shown} is a binary file ({size:,} bytes, {kind}); its bytes are not shown. "
        f"Inspect it with run_command if needed (e.g. `file {shown}` or `xxd -l 256 {shown}`)."
    )


def read_page(root: Path, path: Path, shown: str, *, offset: int, limit: int | None,
              budget: int, scan_bytes: int, secrets: tuple[str, ...] = ()) -> Page:
    """Lines ``offset``.. (1-based, at most ``limit``) of the text file ``path``, within
    ``budget`` characters; a binary file is described instead. At most ``scan_bytes`` of the
    file are read (to reach ``offset``, to cut a long line, to count the lines left). A line
    cut to its head and tail is redacted (key-shaped tokens and ``secrets``) before it is
    cut."""
    try:
        with open_regular(root, path) as fd, os.fdopen(os.dup(fd), "rb") as raw:
            size = os.fstat(fd).st_size
            head = raw.read(BINARY_SNIFF_BYTES)
            if b"\0" in head:
                return Page(describe_binary(head, size, shown))
            if not head:
                return Page(f"({shown} is empty)")
            raw.seek(0)
            handle = _Capped(raw, scan_bytes)
            return _page(handle, shown, offset=offset, limit=limit, budget=budget,
                         secrets=secrets)
    except OSError as error:
        raise refuse_unreadable(error, shown) from error


class _Capped:
    """A file handle that gives at most ``limit`` bytes from the start, then acts as if the
    file ended; ``capped`` tells whether the file goes on past that point."""

    def __init__(self, handle: BinaryIO, limit: int) -> None:
        self._handle, self._left, self.limit = handle, limit, limit
        self._goes_on: bool | None = None

    def readline(self, most: int) -> bytes:
        return self._take(self._handle.readline(min(most, self._left)) if self._left else b"")

    def read(self, most: int) -> bytes:
        return self._take(self._handle.read(min(most, self._left)) if self._left else b"")

    def _take(self, data: bytes) -> bytes:
        self._left -= len(data)
        return data

    @property
    def capped(self) -> bool:
        if self._left > 0:
            return False
        if self._goes_on is None:  # one byte past the cap says whether the file goes on
            self._goes_on = bool(self._handle.read(1))
        return self._goes_on

    def more_than(self, count: int) -> str:
        """``count`` as a number, or "more than ``count``" when reading stopped at the cap."""
        return f"more than {count:,}" if self.capped else f"{count:,}"


def _decode(raw: bytes, shown: str, line: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{shown} is not UTF-8 text ({exc.reason} at byte {exc.start} of line {line})"
        ) from exc


def _long_line(handle: _Capped, first: bytes, keep: int) -> tuple[str, str, int]:
    """The rest of a line longer than the budget, read in chunks: its head, its tail and
    its length in bytes (only ``keep`` bytes of each end are held)."""
    head, tail, total = first[:keep], first[-keep:] if keep else b"", len(first)
    while not first.endswith(b"\n"):
        first = handle.readline(_CHUNK)
        if not first:
            break
        total += len(first)
        tail = (tail + first)[-keep:] if keep else b""
    return (head.decode("utf-8", "ignore"), tail.decode("utf-8", "ignore"), total)


def _count_rest(handle: _Capped) -> int:
    """Lines left after the current position (a last line without a newline counts)."""
    count, last = 0, b"\n"
    while chunk := handle.read(_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)


def _omitted(cut: int) -> str:
    return f"[… {cut} characters omitted …]"


def _page(handle: _Capped, shown: str, *, offset: int, limit: int | None, budget: int,
          secrets: tuple[str, ...] = ()) -> Page:
    first = max(1, offset)
    last = first + limit - 1 if limit is not None else None
    lines: list[str] = []
    used = 0
    number = 0
    cut_at: int | None = None  # the first line not shown for lack of budget
    while True:
        raw = handle.readline(budget * 4 + 1)
        if not raw:
            break
        number += 1
        if number < first:
            if not raw.endswith(b"\n"):
                _long_line(handle, raw, 1)
            continue
        if last is not None and number > last:
            break
        if not raw.endswith(b"\n") and len(raw) > budget * 4:
            if lines:  # show it on its own page
                cut_at = number
                break
            head, tail, total = _long_line(handle, raw, budget // 2 + CUT_REACH)
            head, tail = cut_edges(head, tail, budget // 2, budget // 2, secrets)
            length = handle.more_than(total)
            note = (f"[line {number} is {length} bytes long; only its first and last "
                    f"{budget // 2:,} characters (of the part read) are shown]")
            return Page(f"{head}\n{_omitted(total - len(head) - len(tail))}\n{tail}",
                        note + _more(shown, number, handle))
        text = _decode(raw, shown, number)
        if used + len(text) > budget:
            if not lines:  # one line over the budget: head and tail of it
                return Page(keep_head_and_tail(text, budget // 2 * 2, _omitted, secrets),
                            _more(shown, number, handle))
            cut_at = number
            break
        lines.append(text)
        used += len(text)
    body = "".join(lines)
    if not raw and lines and handle.capped:
        return Page(body, f"[lines {first}-{first + len(lines) - 1} shown; read_file reads no "
                    f"further than the first {handle.limit:,} bytes of {shown}: use "
                    "run_command to read the rest]")
    if cut_at is None and (last is None or not raw) and first == 1:
        return Page(body)  # the whole file
    shown_last = first + len(lines) - 1
    if cut_at is not None or raw:
        following = (cut_at or number)
        rest = _count_rest(handle) + 1  # the unread line itself, then the rest
        total = following + rest - 1
        reason = (f"cut to fit the {budget:,}-character budget" if cut_at is not None
                  else f"limit={limit}")
        note = (f"[lines {first}-{shown_last} of {handle.more_than(total)} shown ({reason}). "
                f"Read on with "
                f"read_file(path={shown!r}, offset={following}, limit=...)]")
        return Page(body, note)
    if not lines and handle.capped:
        return Page(f"(offset {first} lies beyond the first {handle.limit:,} bytes of {shown}, "
                    "which is as far as read_file reads; use run_command to read further, "
                    f"e.g. `sed -n '{first},+100p' {shown}`)")
    if not lines:
        return Page(f"({shown} has {number} lines; offset {first} is past the end)")
    return Page(body, f"[lines {first}-{shown_last} of {number:,}: the end of the file]")


def _more(shown: str, number: int, handle: _Capped) -> str:
    rest = _count_rest(handle)
    if rest == 0:
        return ""
    return (f"\n[{handle.more_than(rest)} more lines after line {number}. Read on with "
            f"read_file(path={shown!r}, offset={number + 1}, limit=...)]")
