"""Shell commands as task text: a sentence that opens with one runs it ("ls -la", "sleep 300")."""

from __future__ import annotations

import re


def _table(words: str) -> frozenset[str]:
    return frozenset(words.split())


_SHELL_COMMANDS = _table(
    "ls pwd grep egrep sed awk curl wget tar unzip gunzip gzip chmod chown mkdir rmdir rm cp"
    " mv ps htop pkill killall lsof netstat du df ssh scp rsync cmake gcc conda npx yarn pnpm"
    " cargo nohup xargs"
)
"""Shell commands that are no English word: a sentence opening with one runs it."""
_SHELL_WORDS = _table("sleep cat head tail touch echo which export cd kill time watch")
"""Shell commands that are English words too: a command only with an argument after them."""
_ARGUMENT = re.compile(r"^(?:-|\d|\S*[/.=$~])")
_PROSE = re.compile(r"[.!?]\s+\w|\s(?:and|then|please|so|but)\s", re.IGNORECASE)
"""Words of a sentence after the command: the task is prose, read word by word."""


def opens_with_shell_command(sentence: str) -> bool:
    """Whether ``sentence`` opens with a shell command (one that is an English word too
    only with an argument after it: "tail -n 50 server.log", not "tail the log")."""
    tokens = sentence.strip().lstrip("$> ").split()
    if not tokens:
        return False
    first = tokens[0].strip("`").lower()
    if first in _SHELL_COMMANDS:
        return True
    return first in _SHELL_WORDS and len(tokens) > 1 and bool(_ARGUMENT.match(tokens[1]))


def bare_command(task: str) -> str | None:
    """The command a task that is only a command line asks to run ("tail -n 50 server.log"),
    else None. A task of several lines or sentences is read word by word instead."""
    text = task.strip().strip("`").strip()
    if not text or "\n" in text or not opens_with_shell_command(text):
        return None
    if _PROSE.search(text):
        return None
    text = text.lstrip("$> ").strip()
    if text.endswith(".") and not text.endswith((" .", "..")):
        text = text[:-1]  # the sentence's full stop, not an argument ("grep -rn TODO .")
    return text or None
