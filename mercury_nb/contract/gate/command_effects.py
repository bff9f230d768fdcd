"""Decides whether a shell command can only read the workspace (so it is no mutation)."""

from __future__ import annotations

import shlex

READ_ONLY_PROGRAMS = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "grep",
        "rg",
        "egrep",
        "fgrep",
        "wc",
        "pwd",
        "echo",
        "which",
        "type",
        "file",
        "stat",
        "du",
        "df",
        "tree",
        "less",
        "more",
        "diff",
        "cmp",
        "env",
        "printenv",
        "whoami",
        "date",
        "uname",
        "true",
        "sort",
        "uniq",
        "cut",
        "nl",
        "md5sum",
        "sha256sum",
        "realpath",
        "dirname",
        "basename",
        "test",
        "[",
    }
)
"""Programs that read but never write files (when no output redirection is used)."""

READ_ONLY_GIT = frozenset(
    {"status", "diff", "log", "show", "branch", "rev-parse", "ls-files", "blame"}
)
"""git subcommands that only read."""

_SEPARATORS = frozenset({"&&", "||", ";", "|"})


def _segments(tokens: list[str]) -> list[list[str]]:
    segments: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS:
            segments.append([])
        else:
            segments[-1].append(token)
    return [s for s in segments if s]


def _segment_is_read_only(segment: list[str]) -> bool:
    words = list(segment)
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]  # leading VAR=value assignments
    if not words:
        return True
    program = words[0].rsplit("/", 1)[-1]
    if program == "cd":
        return True
    if program == "git":
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        return sub in READ_ONLY_GIT
    if program in {"python", "python3"} and words[1:2] in (["--version"], ["-V"]):
        return True
    if program == "find":
        return not any(w in {"-delete", "-exec", "-execdir", "-fprint"} for w in words)
    if program == "sed":
        return not any(w.startswith("-i") or w == "--in-place" for w in words)
    return program in READ_ONLY_PROGRAMS


def is_read_only_command(command: str) -> bool:
    """True only when every part of the command is a known read-only program and nothing
    is redirected into a file. Unknown programs may write, so they are not read-only."""
    if any(mark in command for mark in (">", "tee ", "$(", "`")):
        return False
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars="&|;")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return False
    segments = _segments(tokens)
    return bool(segments) and all(_segment_is_read_only(s) for s in segments)
