"""Which changed files are prose or tabular data (a read-back can show them) and which are code."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

NON_CODE_SUFFIXES = frozenset({
    ".md", ".markdown", ".rst", ".txt", ".text", ".adoc", ".asciidoc", ".org", ".tex", ".csv",
    ".tsv", ".xlsx", ".xls", ".ods", ".parquet",
})
"""Prose and tabular data: nothing builds or imports them, so a read-back can show them.
(``.mdx`` is JSX inside Markdown, so code.)

Configuration (.json, .yaml, .yml, .toml, .ini, .cfg), markup that runs (.html, .svg)
and notebooks are code: builds, packagers and CI read them, and only a check can show
they still work. ``requirements*.txt``, ``constraints*.txt`` and ``CMakeLists.txt`` are
code despite their suffix."""

NON_CODE_NAMES = frozenset(
    {"LICENSE", "LICENCE", "COPYING", "AUTHORS", "CONTRIBUTORS", "NOTICE", "CHANGELOG"}
)
"""Suffix-less files that are prose."""

_CODE_TEXT_PREFIXES = ("requirements", "constraints", "cmakelists")


def is_non_code_path(path: str) -> bool:
    """True for prose and tabular data files (see ``NON_CODE_SUFFIXES``)."""
    name = posixpath.basename(path.replace("\\", "/"))
    stem, suffix = posixpath.splitext(name)
    if name in NON_CODE_NAMES:
        return True
    if stem.lower().startswith(_CODE_TEXT_PREFIXES):
        return False
    return suffix.lower() in NON_CODE_SUFFIXES


def only_non_code(paths: Iterable[str]) -> bool:
    """True when there is at least one path and every one is non-code."""
    listed = list(paths)
    return bool(listed) and all(is_non_code_path(p) for p in listed)


def normalize_path(path: str) -> str:
    """A path as the task or a tool wrote it, compared as a workspace path: quotes and a
    leading ``./`` dropped, ``\\`` read as ``/``, ``a/../b`` folded."""
    text = path.strip().strip("`'\"").replace("\\", "/")
    if not text:
        return text
    return posixpath.normpath(text)


def same_file(named: str, other: str) -> bool:
    """``named`` and ``other`` are the same workspace file: equal once normalized, or one is
    absolute and ends with the other (``/work/ws/hello.py`` and ``hello.py``)."""
    a, b = normalize_path(named), normalize_path(other)
    if a == b:
        return True
    if a.startswith("/") and not b.startswith("/"):
        return a.endswith("/" + b)
    if b.startswith("/") and not a.startswith("/"):
        return b.endswith("/" + a)
    return False
