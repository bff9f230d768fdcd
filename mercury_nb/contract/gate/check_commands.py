"""Which shell commands are verification checks, read from their words, never substrings."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from enum import Enum

from mercury_nb.contract.gate.command_line import gating_commands, strip_assignments
from mercury_nb.contract.word_sets import word_set


class CheckKind(Enum):
    """A build/test/lint/type check, or a run of notebooks (which is also a check)."""

    CHECK = "check"
    NOTEBOOK = "notebook"


_HELP_FLAGS = word_set("--help -h --version -V --help-all")
_LISTING_FLAGS = {  # flags with which a check lists, prints or plans instead of running
    "pytest": word_set(
        "--collect-only --co --fixtures --funcargs --fixtures-per-test --markers --setup-plan"
    ),
    "py.test": word_set("--collect-only --co --fixtures --fixtures-per-test --markers"),
    "tox": word_set("-l --listenvs -a --listenvs-all --showconfig --notest"),
    "nox": word_set("-l --list --list-sessions"),
    "jest": word_set("--listTests --showConfig"),
    "vitest": word_set("--list"),
    "mocha": word_set("--dry-run"),
    "go": word_set("-list -n"),
    "tsc": word_set("--listFiles --listFilesOnly --showConfig"),
    "mvn": word_set("--dry-run"),
    "gradle": word_set("-m --dry-run --tasks tasks"),
    "gradlew": word_set("-m --dry-run tasks"),
}
_PYTHON = re.compile(r"(python|pypy)(\d+(\.\d+)*)?(\.exe)?|py")
_ALWAYS_ZERO_FLAGS = word_set("--exit-zero --if-present")
"""Flags with which a check exits 0 whatever it finds (``ruff check --exit-zero``, ``npm
test --if-present``): its exit code is no evidence, like ``|| true``."""
_PYTHON_VALUE_OPTIONS = word_set("-X -W -Q")
_ALWAYS = word_set(
    "pytest py.test tsc mypy pyright basedpyright tox nox jest vitest mocha eslint flake8"
    " pylint unittest"
)
_NOTEBOOK_RUNNERS = word_set("papermill jupyter-execute nbclient")
_PACKAGE_MANAGERS = word_set("npm pnpm yarn bun")
_SCRIPT_NAMES = word_set("test tests build lint typecheck type-check tsc check verify ci")
_SUBCOMMANDS = {
    "cargo": word_set("build test check clippy nextest"),
    "go": word_set("build test vet"),
    "dotnet": word_set("build test"),
    "dmypy": word_set("run check"),
}
_ANY_GOAL = word_set("mvn mvnw gradle gradlew")
_MAKE = word_set("make gmake")
_MAKE_DRY_RUN = word_set("-n --dry-run --just-print --recon -q --question -p --print-data-base")
_ENV_MANAGER = word_set("-n --name -p --prefix --cwd")
_RUNNERS = {  # two-word launchers -> their options that take a value
    ("uv", "run"): word_set(
        "--with --python -p --extra --group --package --directory --project --env-file"
        " --with-requirements"
    ),
    ("poetry", "run"): word_set("-C --directory -P --project"),
    ("pdm", "run"): word_set("-p --project"),
    ("hatch", "run"): frozenset(),
    ("pipenv", "run"): frozenset(),
    ("rye", "run"): frozenset(),
    ("conda", "run"): _ENV_MANAGER,
    ("mamba", "run"): _ENV_MANAGER,
    ("micromamba", "run"): _ENV_MANAGER,
    ("pipx", "run"): word_set("--spec --python"),
    ("pnpm", "exec"): frozenset(),
    ("pnpm", "dlx"): frozenset(),
    ("yarn", "exec"): frozenset(),
    ("yarn", "dlx"): frozenset(),
    ("npm", "exec"): word_set("-p --package"),
}
_PREFIX_RUNNERS = {  # one-word launchers -> their options that take a value
    "uvx": word_set("--from --with --python -p"),
    "npx": word_set("-p --package"),
    "bunx": frozenset(),
    "time": frozenset(),
    "command": frozenset(),
    "exec": frozenset(),
    "nohup": frozenset(),
    "nice": word_set("-n --adjustment"),
    "env": word_set("-u --unset -C --chdir"),
    "timeout": word_set("-s --signal -k --kill-after"),
}
_SHELLS = word_set("sh bash zsh dash")


def _skip_options(words: tuple[str, ...], takes_value: frozenset[str]) -> tuple[str, ...]:
    index = 0
    while index < len(words) and words[index].startswith("-") and words[index] != "-":
        index += 2 if words[index] in takes_value else 1
    return words[index:]


def unwrap(words: tuple[str, ...]) -> tuple[str, ...]:
    """Strip assignments and launchers (``env``, ``timeout 60``, ``uv run`` ...) to
    reach the program that really runs."""
    while True:
        words = strip_assignments(words)
        if not words:
            return words
        program = posixpath.basename(words[0])
        if len(words) > 1 and (program, words[1]) in _RUNNERS:
            words = _skip_options(words[2:], _RUNNERS[(program, words[1])])
        elif program in _PREFIX_RUNNERS:
            words = _skip_options(words[1:], _PREFIX_RUNNERS[program])
            if program == "timeout" and words:
                words = words[1:]  # the duration
        else:
            return words


def _first_argument(args: tuple[str, ...]) -> str | None:
    return next((a for a in args if not a.startswith(("-", "+"))), None)


def _script_is_check(name: str | None) -> bool:
    return name is not None and name.split(":")[0] in _SCRIPT_NAMES


def _package_manager_kind(program: str, args: tuple[str, ...]) -> CheckKind | None:
    sub = _first_argument(args)
    if sub in {"test", "t", "tst"}:
        return CheckKind.CHECK
    rest = args[args.index(sub) + 1 :] if sub is not None else ()
    if sub in {"run", "run-script"}:
        return CheckKind.CHECK if _script_is_check(_first_argument(rest)) else None
    if program != "npm" and _script_is_check(sub):
        return CheckKind.CHECK  # pnpm build, yarn lint, bun run-less scripts
    return None


def python_module(program: str, args: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """``python [opts] -m MODULE ARGS`` -> ``(MODULE, ARGS)``; anything else unchanged."""
    if not _PYTHON.fullmatch(program):
        return program, args
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "-m":
        index += 2 if args[index] in _PYTHON_VALUE_OPTIONS else 1
    if index + 1 < len(args) and args[index] == "-m":
        return args[index + 1], args[index + 2 :]
    return program, args


def _python_kind(args: tuple[str, ...]) -> CheckKind | None:
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "-m":
        index += 2 if args[index] in _PYTHON_VALUE_OPTIONS else 1
    if index + 1 < len(args) and args[index] == "-m":
        return _program_kind(args[index + 1], args[index + 2 :])
    script = args[index] if index < len(args) else None
    if script is not None and posixpath.basename(script) == "manage.py":
        return CheckKind.CHECK if args[index + 1 : index + 2] == ("test",) else None
    return None


def listing_flag(program: str, args: tuple[str, ...]) -> str | None:
    """The flag with which ``program args`` only lists, prints or plans (``--help``,
    ``--version``, ``pytest --collect-only``, ``make -n`` ...), else None."""
    listing = _HELP_FLAGS | _LISTING_FLAGS.get(program, frozenset())
    if program in _MAKE:
        listing |= _MAKE_DRY_RUN
    return next((arg for arg in args if arg in listing), None)


def always_zero_flag(args: tuple[str, ...]) -> str | None:
    """``--exit-zero`` or ``--if-present`` among ``args``, else None."""
    return next((arg for arg in args if arg in _ALWAYS_ZERO_FLAGS), None)


def _program_kind(program: str, args: tuple[str, ...]) -> CheckKind | None:
    """The kind of check ``program args`` is, or None when it is no check (or a dry run)."""
    if listing_flag(program, args) is not None or always_zero_flag(args) is not None:
        return None
    return program_check_kind(program, args)


def program_check_kind(program: str, args: tuple[str, ...]) -> CheckKind | None:
    """The kind of check ``program`` is whatever its flags, or None when it is no check."""
    sub = _first_argument(args)
    if _PYTHON.fullmatch(program):
        return _python_kind(args)
    if program in _NOTEBOOK_RUNNERS:
        return CheckKind.NOTEBOOK
    if program in {"pytest", "py.test"} and any(a.startswith("--nbval") for a in args):
        return CheckKind.NOTEBOOK
    if program in _ALWAYS:
        return CheckKind.CHECK
    if program == "ruff":
        formatting = sub == "format" and bool({"--check", "--diff"} & set(args))
        return CheckKind.CHECK if sub == "check" or formatting else None
    if program in _PACKAGE_MANAGERS:
        return _package_manager_kind(program, args)
    if program in _SUBCOMMANDS:
        return CheckKind.CHECK if sub in _SUBCOMMANDS[program] else None
    if program in _MAKE:
        return CheckKind.CHECK
    if program in _ANY_GOAL:
        return CheckKind.CHECK if sub is not None else None
    if program in {"jupyter", "jupyter-nbconvert", "nbconvert"}:
        if program == "jupyter" and sub == "execute":
            return CheckKind.NOTEBOOK
        executes = "--execute" in args and (program != "jupyter" or sub == "nbconvert")
        return CheckKind.NOTEBOOK if executes else None
    return None


def _shell_script(args: tuple[str, ...]) -> str | None:
    """The script of ``sh -c SCRIPT`` (also ``bash -lc SCRIPT``), else None."""
    for index, arg in enumerate(args):
        if not arg.startswith("-"):
            return None
        if "c" in arg[1:] and not arg.startswith("--") and index + 1 < len(args):
            return args[index + 1]
    return None


def check_kinds(command: str, _depth: int = 0) -> frozenset[CheckKind]:
    """The kinds of check whose exit status decides ``command``'s, parsed by words.

    ``echo pytest`` and ``cat test.py`` are no checks, nor is ``pytest | tail`` (the
    pipeline's status is ``tail``'s) or ``pytest || true``.
    """
    kinds: set[CheckKind] = set()
    for words in gating_commands(command):
        unwrapped = unwrap(words)
        if not unwrapped:
            continue
        program = posixpath.basename(unwrapped[0])
        script = _shell_script(unwrapped[1:]) if program in _SHELLS else None
        if script is not None and _depth < 3:
            kinds |= check_kinds(script, _depth + 1)
            continue
        kind = _program_kind(program, unwrapped[1:])
        if kind is not None:
            kinds.add(kind)
    return frozenset(kinds)


def is_verification_command(command: str) -> bool:
    """True when ``command`` runs a build, test, lint, type check or notebook run."""
    return bool(check_kinds(command))


def executes_notebooks(command: str) -> bool:
    """True when ``command`` executes notebooks (nbconvert --execute, jupyter execute,
    papermill, python -m nbclient, pytest --nbval)."""
    return CheckKind.NOTEBOOK in check_kinds(command)


def touches_notebooks(paths: Iterable[str]) -> bool:
    """True when any changed path is a notebook."""
    return any(path.lower().endswith(".ipynb") for path in paths)

