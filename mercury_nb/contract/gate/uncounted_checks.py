"""Why a command line that ran a check does not count as evidence, and how to run it so it does."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Literal, assert_never

from mercury_nb.contract.gate.check_commands import (
    always_zero_flag,
    is_verification_command,
    listing_flag,
    program_check_kind,
    python_module,
    unwrap,
)
from mercury_nb.contract.gate.command_line import conditional_flags, parse_commands

UncountedWhy = Literal["piped", "masked", "followed", "background", "or-branch", "negated",
                       "listing", "always-zero"]


@dataclass(frozen=True)
class UncountedCheck:
    """A command line that ran a check in a way whose exit code is not the check's."""

    why: UncountedWhy
    check: str
    """The check's own words: how to run it so that it counts."""
    run: str
    """The whole command line as it ran."""
    detail: str = ""
    """The other command (``tail``), or the listing flag (``--collect-only``)."""

    def explanation(self) -> str:
        """Why the run did not count, in plain words."""
        match self.why:
            case "piped":
                return f"it was piped into `{self.detail}`, so the exit code was `{self.detail}`'s"
            case "masked":
                return f"`|| {self.detail}` after it hides its failure"
            case "followed":
                return f"`; {self.detail}` after it decides the exit code"
            case "background":
                return "it ran in the background (`&`), so its exit code was never seen"
            case "or-branch":
                return "it was on the right-hand side of `||`, so it may never have run"
            case "negated":
                return "`!` negated its exit code"
            case "listing":
                return f"`{self.detail}` only lists or prints, nothing was checked"
            case "always-zero":
                return f"`{self.detail}` makes it exit 0 whatever it finds"
            case _ as unreachable:
                assert_never(unreachable)


def uncounted_check(command: str) -> UncountedCheck | None:
    """Why ``command`` runs a check that does not count as evidence, or None (it counts,
    or it runs no check at all). ``pytest -q 2>&1 | tail -5`` -> piped into ``tail``."""
    if is_verification_command(command):
        return None
    commands = parse_commands(command)
    conditional = conditional_flags(command)
    for index, simple in enumerate(commands):
        negated = simple.words[:1] == ("!",)
        unwrapped = unwrap(simple.words[1:] if negated else simple.words)
        if not unwrapped:
            continue
        program, args = python_module(posixpath.basename(unwrapped[0]), unwrapped[1:])
        if program_check_kind(program, args) is None:
            continue
        check = " ".join(simple.words[1:] if negated else simple.words)
        after = commands[index + 1].words[0] if index + 1 < len(commands) else ""
        flag = listing_flag(program, args)
        if flag is not None:
            return UncountedCheck("listing", check, command, flag)
        zero = always_zero_flag(args)
        if zero is not None:
            return UncountedCheck("always-zero", check, command, zero)
        if negated:
            return UncountedCheck("negated", check, command)
        if conditional[index]:
            return UncountedCheck("or-branch", check, command)
        match simple.followed_by:
            case "|" | "|&":
                return UncountedCheck("piped", check, command, after)
            case "||":
                return UncountedCheck("masked", check, command, after)
            case "&":
                return UncountedCheck("background", check, command)
            case ";" | ";;":
                return UncountedCheck("followed", check, command, after)
    return None
