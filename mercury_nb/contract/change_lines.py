"""One changed file as a banner line: its line counts, or its size when it was not diffed."""

from __future__ import annotations

from mercury_nb.contract.outcome import FileChange
from mercury_nb.contract.untrusted import shown_name


def change_line(change: FileChange) -> str:
    """``+A −R path`` with `` (created)`` or `` (deleted)`` when it applies; a binary or
    too-large file is ``path (created, 50.0 MB, not diffed)`` instead of fake counts. The
    path is shown by :func:`shown_name`: escaped and quoted, it cannot draw a line of its own."""
    path = shown_name(change.path)
    if not change.measured:
        size = "" if change.size is None else f", {human_size(change.size)}"
        binary = ", binary" if change.binary else ""
        return f"{path} ({change.kind}{size}{binary}, not diffed)"
    suffix = f" ({change.kind})" if change.kind in ("created", "deleted") else ""
    return f"+{change.added} −{change.removed} {path}{suffix}"


def human_size(size: int) -> str:
    """``80 bytes``, ``12.5 KB``, ``2.1 MB``, ``1.2 GB`` (binary units)."""
    if size < 1024:
        return f"{size} bytes"
    value = size / 1024
    for unit in ("KB", "MB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"
