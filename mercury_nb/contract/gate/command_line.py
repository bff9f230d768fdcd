"""Splits a shell command line into the simple commands whose exit status decides its own."""

from __future__ import annotations

import re
from dataclasses import dataclass

_CONTROL_OPERATORS = frozenset({"&&", "||", ";", ";;", "|", "|&", "&", "(", ")"})
_TWO_CHAR_OPERATORS = frozenset({"&&", "||", "|&", ";;", ">>", "<<", ">&", "<&", "&>", ">|"})
_OPERATOR_CHARS = "&|;()<>"
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


@dataclass(frozen=True)
class Token:
    """A word of the command line (quotes removed) or an unquoted operator."""

    text: str
    operator: bool = False


def lex(command: str) -> tuple[Token, ...]:
    """POSIX-like lexing: quotes and backslashes are honoured, operators are only ever
    unquoted (``echo "a && b"`` is two words), a file-descriptor number before a
    redirection is dropped, ``#`` starts a comment, a newline separates commands.

    Raises ``ValueError`` on an unclosed quote.
    """
    tokens: list[Token] = []
    word: list[str] = []
    in_word = False
    i, n = 0, len(command)

    def flush() -> None:
        nonlocal word, in_word
        if in_word:
            tokens.append(Token("".join(word)))
        word, in_word = [], False

    while i < n:
        ch = command[i]
        if ch == "\\":
            if i + 1 < n and command[i + 1] != "\n":
                word.append(command[i + 1])
                in_word = True
            i += 2
        elif ch == "'":
            end = command.find("'", i + 1)
            if end < 0:
                raise ValueError("unclosed single quote")
            word.append(command[i + 1 : end])
            in_word, i = True, end + 1
        elif ch == '"':
            i = _read_double_quoted(command, i + 1, word)
            in_word = True
        elif ch in " \t\r":
            flush()
            i += 1
        elif ch == "\n":
            flush()
            tokens.append(Token(";", operator=True))
            i += 1
        elif ch == "#" and not in_word:
            end = command.find("\n", i)
            i = n if end < 0 else end
        elif command.startswith("$(", i):
            i = _read_substitution(command, i, word)
            in_word = True
        elif ch in _OPERATOR_CHARS:
            op = command[i : i + 2] if command[i : i + 2] in _TWO_CHAR_OPERATORS else ch
            if ch in "<>" and in_word and "".join(word).isdigit():
                word, in_word = [], False  # "2>&1": the 2 names a file descriptor
            flush()
            tokens.append(Token(op, operator=True))
            i += len(op)
        else:
            word.append(ch)
            in_word = True
            i += 1
    flush()
    return tuple(tokens)


def _read_double_quoted(command: str, start: int, word: list[str]) -> int:
    i = start
    while i < len(command):
        ch = command[i]
        if ch == '"':
            return i + 1
        if ch == "\\" and i + 1 < len(command) and command[i + 1] in '"\\$`':
            word.append(command[i + 1])
            i += 2
            continue
        word.append(ch)
        i += 1
    raise ValueError("unclosed double quote")


def _read_substitution(command: str, start: int, word: list[str]) -> int:
    """Keep ``$( ... )`` inside the current word, nested parentheses included."""
    depth, i = 0, start + 1
    while i < len(command):
        depth += {"(": 1, ")": -1}.get(command[i], 0)
        i += 1
        if depth == 0:
            word.append(command[start:i])
            return i
    raise ValueError("unclosed command substitution")


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command: its words (redirections removed) and the operator after it."""

    words: tuple[str, ...]
    followed_by: str


def simple_commands(tokens: tuple[Token, ...]) -> tuple[SimpleCommand, ...]:
    """The non-empty simple commands in order. Parentheses are transparent; a
    redirection operator and its target word are dropped. The last command is
    ``followed_by`` "end" unless it is put in the background (``&``) or piped."""
    found: list[SimpleCommand] = []
    words: list[str] = []
    skip_next = False
    for token in tokens:
        if skip_next and not token.operator:
            skip_next = False
            continue
        skip_next = False
        if not token.operator:
            words.append(token.text)
        elif token.text in _CONTROL_OPERATORS:
            if token.text in "()":
                continue
            if words:
                found.append(SimpleCommand(tuple(words), token.text))
            elif found and token.text in {"&", "|", "|&"}:
                found[-1] = SimpleCommand(found[-1].words, token.text)
            words = []
        else:
            skip_next = True  # a redirection: the next word is its target
    if words:
        found.append(SimpleCommand(tuple(words), "end"))
    elif found and found[-1].followed_by not in {"&", "|", "|&"}:
        found[-1] = SimpleCommand(found[-1].words, "end")
    return tuple(found)


def parse_commands(command: str) -> tuple[SimpleCommand, ...]:
    """The simple commands of ``command`` in order; none when it cannot be parsed."""
    try:
        return simple_commands(lex(command))
    except ValueError:
        return ()


def conditional_flags(command: str) -> tuple[bool, ...]:
    """For each of :func:`parse_commands`, whether it runs only when an earlier command
    failed: it is on the right-hand side of ``||`` (``true || pytest`` never runs pytest).
    ``a || b && c`` is ``(a || b) && c``: only ``b`` is conditional; a pipeline after
    ``||`` is conditional as a whole. Inside parentheses the grouping is not tracked, so
    everything after the first ``||`` is conditional."""
    try:
        tokens = lex(command)
    except ValueError:
        return ()
    grouped = any(t.operator and t.text in "()" for t in tokens)
    commands = simple_commands(tokens)
    flags: list[bool] = []
    seen_or = False
    for index in range(len(commands)):
        previous = commands[index - 1].followed_by if index > 0 else None
        seen_or = seen_or or previous == "||"
        if grouped:
            flags.append(seen_or)
        elif previous == "||":
            flags.append(True)
        elif previous in {"|", "|&"}:
            flags.append(flags[-1])
        else:
            flags.append(False)
    return tuple(flags)


def gating_commands(command: str) -> tuple[tuple[str, ...], ...]:
    """The simple commands whose failure makes the whole line fail.

    A command counts when only ``&&`` follows it up to the end of the line: in
    ``cd x && pytest`` both count; in ``pytest | tail``, ``pytest || true`` or
    ``pytest; echo done`` the exit status is someone else's, so ``pytest`` does not.
    A command negated with ``!`` never counts, nor one on the right-hand side of ``||``
    (it may never run). An unparsable line has none.
    """
    commands = parse_commands(command)
    conditional = conditional_flags(command)
    gating: list[tuple[str, ...]] = []
    for index, simple in enumerate(commands):
        rest = commands[index:]
        chained = all(c.followed_by == "&&" for c in rest[:-1]) and rest[-1].followed_by == "end"
        if chained and not conditional[index] and simple.words[0] != "!":
            gating.append(simple.words)
    return tuple(gating)


def strip_assignments(words: tuple[str, ...]) -> tuple[str, ...]:
    """Drop leading ``NAME=value`` environment assignments."""
    index = 0
    while index < len(words) and _ASSIGNMENT.match(words[index]):
        index += 1
    return words[index:]
