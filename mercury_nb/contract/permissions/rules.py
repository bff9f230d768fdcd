"""Allow rules: a command is split at every chain operator and each part must match a rule.

A rule is an fnmatch-style glob over a WHOLE command part (``python -m pytest*``). A command
chained with ``;``, ``&&``, ``||``, ``|``, ``&`` or a newline is split (quotes respected)
and every part must match some rule, so ``pytest; curl evil`` is not matched by
``pytest*``. A command with a substitution (backticks or ``$(``) runs what no rule names and
is never matched. The built-in rules (:data:`BUILT_IN_RULES`) allow a short list of
read-only commands, and never a part that redirects (``>``, ``<``), a git command given
``--output``, or one whose arguments reach outside the workspace folder (``cat ~/.netrc``,
``cat .?/.?/etc/passwd``). ``&`` and ``|`` inside a redirection (``2>&1``, ``&>``, ``>|``)
chain nothing. A part that redirects into a file (``pytest > ~/.bashrc``) matches only a rule
that itself holds a ``>``; copying a descriptor (``2>&1``) is no such redirection.
What makes git itself run a program (``core.fsmonitor`` for ``git status``,
``diff.external``) is in ``.git``, which an ``edits`` task may not write unasked
(:func:`~mercury_nb.contract.permissions.decide.decide`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase

BUILT_IN_COMMANDS = ("ls", "cat", "head", "git status", "git diff", "git log", "pwd")
"""The read-only commands every mode that runs commands allows without asking."""

BUILT_IN_RULES: tuple[str, ...] = tuple(
    rule for name in BUILT_IN_COMMANDS for rule in (name, f"{name} *"))
""":data:`BUILT_IN_COMMANDS` as rules: the command alone or with arguments."""

_SEPARATORS = frozenset(";&|\n")


def command_parts(command: str) -> tuple[str, ...] | None:
    """The parts of ``command`` between chain operators, stripped, empty ones dropped; None
    when it holds a command substitution (backticks, ``$(``) or an unclosed quote: such a
    command is matched by no rule."""
    parts: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(command):
        char = command[i]
        if quote == "'":
            if char == "'":
                quote = None
            current.append(char)
        elif char == "\\" and i + 1 < len(command):
            current.append(command[i:i + 2])
            i += 1
        elif char == "`" or command.startswith("$(", i):
            return None
        elif quote == '"':
            if char == '"':
                quote = None
            current.append(char)
        elif char in "'\"":
            quote = char
            current.append(char)
        elif char in _SEPARATORS and not _redirection(command, i):
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    if quote is not None:
        return None
    parts.append("".join(current))
    return tuple(" ".join(part.split()) for part in parts if part.strip())


def _redirection(command: str, i: int) -> bool:
    """Whether the ``&`` or ``|`` at ``i`` belongs to a redirection (``2>&1``, ``<&3``,
    ``&>file``, ``>|file``), not a chain operator."""
    char, before = command[i], command[i - 1] if i else ""
    after = command[i + 1] if i + 1 < len(command) else ""
    if char == "&":
        return (before in "<>" and before != "") or (after == ">" and before != "&")
    return char == "|" and before == ">"


_FD_COPY = re.compile(r"\d*[<>]&(?:\d+|-)(?=\s|$)")
"""A redirection that copies or closes a descriptor (``2>&1``, ``>&2``, ``3<&-``): it opens
no file."""


def _part_matches(part: str, rules: Iterable[str]) -> bool:
    writes = ">" in _FD_COPY.sub("", part)  # a file redirection: ``> ~/.bashrc``
    if any(fnmatchcase(part, " ".join(rule.split())) and (not writes or ">" in rule)
           for rule in rules):
        return True
    return _read_only(part) and any(fnmatchcase(part, rule) for rule in BUILT_IN_RULES)


def _read_only(part: str) -> bool:
    """Whether a part the built-in rules match writes nothing and reads only the workspace:
    no redirection (``>``); for git no ``--output`` (``git diff --output=FILE`` and ``git log
    --output FILE`` write a file; a word starting ``--ou`` is refused whole, should a git
    accept it abbreviated); and no argument that reaches outside the workspace folder (an
    absolute path, ``~``, a ``..`` step, a ``$`` variable: ``cat ~/.ssh/id_ed25519``)."""
    if ">" in part or "<" in part:  # a redirection: writes, or reads from anywhere
        return False
    words = part.split()
    if any(_outside(word.strip("'\"")) for word in words[1:]):
        return False
    return words[0] != "git" or not any(word.startswith("--ou") for word in words[1:])


def _outside(word: str) -> bool:
    """Whether a command word may name a path outside the folder it runs in: absolute, in a
    home (``~``), a ``..`` step, a variable, or a pattern the shell could expand to one
    (``.?/.?/etc/passwd``, ``.[.]/x``: a glob in a word with a ``/`` or starting ``.``)."""
    value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
    globbed = any(char in value for char in "*?[{") and (
        "/" in value or value.startswith(".") or "\\" in value)
    return (value.startswith(("/", "~")) or "$" in value or globbed
            or ".." in value.replace("\\", "/").split("/"))


def matches_rules(command: str, rules: Iterable[str]) -> bool:
    """Whether every part of ``command`` matches one of ``rules`` or a built-in rule (see the
    module); an empty command matches nothing."""
    parts = command_parts(command)
    if not parts:
        return False
    given = tuple(rules)
    return all(_part_matches(part, given) for part in parts)


TOOL_RULE_PREFIX = "tool:"
"""A rule for a tool call that is no command: ``tool:run_cells`` (a glob over the tool's
name) lets ``run_cells`` run unasked; "Always allow" offers it for such a call."""


def tool_rule(tool: str) -> str:
    """The rule that allows every call of ``tool`` (its name's glob characters escaped)."""
    return TOOL_RULE_PREFIX + _glob_literal(tool)


def matches_tool_rules(tool: str, rules: Iterable[str]) -> bool:
    """Whether one of ``rules`` is a ``tool:`` rule whose glob matches the name ``tool``."""
    return any(rule.startswith(TOOL_RULE_PREFIX)
               and fnmatchcase(tool, rule.removeprefix(TOOL_RULE_PREFIX).strip())
               for rule in rules)


def exact_rule(command: str) -> str | None:
    """The rule that allows exactly ``command`` (its glob characters escaped; spaces
    normalized), or None for a chained command or one with a substitution: such a command is
    allowed only part by part."""
    parts = command_parts(command)
    if parts is None or len(parts) != 1:
        return None
    return _glob_literal(parts[0])


def _glob_literal(text: str) -> str:
    """``text`` as a glob that matches only itself (its glob characters escaped)."""
    escaped = {"[": "[[]", "*": "[*]", "?": "[?]"}
    return "".join(escaped.get(char, char) for char in text)
