"""The one way the pure core writes a table of words: a space-separated text as a set."""

from __future__ import annotations


def word_set(text: str) -> frozenset[str]:
    """The words of ``text`` (split on white space) as a set: ``word_set("ls cat head")``."""
    return frozenset(text.split())
