"""Whether a shell command is the run a task asked for ("run hello.py" -> ``python hello.py``).

A requested run counts as a check only when its own exit status decides the command's
(``python hello.py | tail`` or ``python hello.py || true`` do not), like any check; it is
read by words, never by substrings (``echo python hello.py`` runs ``echo``).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from mercury_nb.contract.gate.check_commands import listing_flag, unwrap
from mercury_nb.contract.gate.command_line import gating_commands, parse_commands
from mercury_nb.contract.gate.file_kinds import same_file


@dataclass(frozen=True)
class RequestedRuns:
    """The programs (script files) and whole commands a task asks to run."""

    programs: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.programs or self.commands)


NO_RUNS = RequestedRuns()
"""The task asks to run nothing."""


_PYTHON = re.compile(r"(python|pypy)(\d+(\.\d+)*)?(\.exe)?|py")
_INTERPRETERS = frozenset(
    {"sh", "bash", "zsh", "dash", "node", "deno", "bun", "ruby", "perl", "php", "Rscript",
     "lua", "julia", "ts-node", "tsx"}
)
_SUBCOMMAND_RUNNERS = {"deno": "run", "bun": "run", "go": "run"}
_VALUE_OPTIONS = frozenset({"-X", "-W", "-Q"})


def _script_and_module(program: str, args: tuple[str, ...]) -> tuple[str | None, str | None]:
    """The script file an interpreter runs, or the module of ``python -m``."""
    if program in _SUBCOMMAND_RUNNERS and args[:1] == (_SUBCOMMAND_RUNNERS[program],):
        args = args[1:]
    elif not (_PYTHON.fullmatch(program) or program in _INTERPRETERS):
        return None, None
    index = 0
    while index < len(args) and args[index].startswith("-"):
        if args[index] == "-m" and _PYTHON.fullmatch(program) and index + 1 < len(args):
            return None, args[index + 1]
        if args[index] == "-c":
            return None, None
        index += 2 if args[index] in _VALUE_OPTIONS else 1
    return (args[index] if index < len(args) else None), None


def _runs_program(words: tuple[str, ...], programs: tuple[str, ...]) -> bool:
    program = posixpath.basename(words[0])
    if listing_flag(program, words[1:]) is not None:
        return False
    if any(same_file(wanted, words[0]) for wanted in programs if "/" in words[0]
           or posixpath.splitext(words[0])[1]):
        return True  # ./hello.py, or hello.py on the PATH
    script, module = _script_and_module(program, words[1:])
    if script is not None:
        return any(same_file(wanted, script) for wanted in programs)
    if module is not None:
        path = module.replace(".", "/") + ".py"
        return any(same_file(wanted, path) for wanted in programs)
    return False


def _command_words(command: str) -> tuple[str, ...] | None:
    simple = parse_commands(command)
    if len(simple) != 1:
        return None
    return unwrap(simple[0].words) or None


def is_requested_run(command: str, runs: RequestedRuns) -> bool:
    """True when a simple command whose exit status decides ``command``'s is a run of a
    requested program or exactly a requested command."""
    if not runs:
        return False
    wanted = {words for c in runs.commands if (words := _command_words(c)) is not None}
    whole = " ".join(command.split())
    if any(whole == " ".join(c.split()) for c in runs.commands):
        return True  # exactly what the task said to run, so its exit status is the answer
    for words in gating_commands(command):
        unwrapped = unwrap(words)
        if not unwrapped:
            continue
        if unwrapped in wanted or _runs_program(unwrapped, runs.programs):
            return True
    return False
