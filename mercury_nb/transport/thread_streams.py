"""A stand-in for ``sys.stdout`` / ``sys.stderr`` that takes one thread's writes elsewhere."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TextIO


class ThreadRouted:
    """Writes from the thread ``ident`` go to ``take`` (which returns what it counts as
    written: ``len`` drops them); every other thread writes to ``original``, the stream this
    stands in for, so a cell printing meanwhile loses nothing."""

    def __init__(self, original: TextIO, ident: int, take: Callable[[str], int]) -> None:
        self._original = original
        self._ident = ident
        self._take = take

    def write(self, text: str) -> int:
        if threading.get_ident() == self._ident:
            return self._take(str(text))
        return self._original.write(text)

    def flush(self) -> None:
        if threading.get_ident() != self._ident:
            self._original.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)
