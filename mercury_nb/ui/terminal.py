"""Terminal safety: strips control sequences from text bound for a terminal (--json stays exact).

Model text, file names and command output are untrusted: an escape sequence in them could
retitle the terminal or write the clipboard (OSC 0/2/52), plant a hyperlink (OSC 8), clear
the screen, move the cursor to overwrite what was printed, or hide text with ``\\r`` and
backspaces. :func:`terminal_safe` removes every ESC sequence (CSI, OSC with its payload,
DCS/SOS/PM/APC strings, two-character escapes), their 8-bit C1 forms, and every other C0/C1
control except newline and tab. :func:`terminal_safe_streams` applies it to what the CLI
prints on stdout and stderr.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

_CONTROL_SEQUENCE = re.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|\Z)"  # OSC ... BEL/ST: title, clipboard
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c|\Z)"  # DCS, SOS, PM, APC
    r"|(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"  # CSI: colours, cursor, clear
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"  # any other escape
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # C0 (but \t \n), DEL, C1
)


def terminal_safe(text: str) -> str:
    """``text`` without control sequences or control characters (newline and tab kept)."""
    return _CONTROL_SEQUENCE.sub("", text)


class TerminalSafeStream(io.TextIOBase):
    """A text stream that writes :func:`terminal_safe` text to ``inner``."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(terminal_safe(text))
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self) -> Any:  # type: ignore[override]
        return getattr(self.inner, "encoding", "utf-8")


@contextlib.contextmanager
def terminal_safe_streams(*, stdout: bool = True) -> Iterator[None]:
    """While inside, what is printed to ``sys.stderr`` (and ``sys.stdout`` when ``stdout``;
    not for ``--json``, which must stay exact) is made terminal-safe."""
    saved = sys.stdout, sys.stderr
    sys.stderr = TerminalSafeStream(sys.stderr)
    if stdout:
        sys.stdout = TerminalSafeStream(sys.stdout)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
