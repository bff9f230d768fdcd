"""Context windows from litellm's bundled model table, read as JSON without importing litellm."""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from typing import Any

TABLE_FILE = "model_prices_and_context_window_backup.json"

_lock = threading.Lock()
_table: dict[str, Any] | None = None


def table_file() -> Path | None:
    """Where the installed litellm keeps its bundled model table (None without litellm)."""
    try:
        spec = importlib.util.find_spec("litellm")  # finds the folder, runs nothing
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / TABLE_FILE
    return path if path.is_file() else None


def bundled_table() -> dict[str, Any]:
    """litellm's model table (context windows, prices), parsed once ({} without litellm)."""
    global _table
    with _lock:
        if _table is None:
            found: dict[str, Any] = {}
            path = table_file()
            if path is not None:
                try:
                    loaded = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    loaded = None
                if isinstance(loaded, dict):
                    found = loaded
            _table = found
        return _table


def bundled_context_window(*names: str) -> int | None:
    """Input tokens of the first of ``names`` the table knows (blocking: ~0.1 s the first
    time, then a lookup), or None."""
    table = bundled_table()
    for name in names:
        info = table.get(name)
        if not isinstance(info, dict):
            continue
        for key in ("max_input_tokens", "max_tokens"):
            value = info.get(key)
            if isinstance(value, int) and value > 0:
                return value
    return None
