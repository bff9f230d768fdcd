"""The ledger side of the magics: ``%mercury tasks | show ID | continue [ID] | stop ID | undo ID``,
``%%mercury continue``, refusing a paused task's text, and the crash-recovery pass at
``%load_ext``.

Imported by :mod:`mercury_nb.kernel.magics` only when a magic runs or the extension loads;
the load pass imports just the SQLite store (no pydantic, no agent loop, never litellm).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Protocol

from IPython.core.error import UsageError

if TYPE_CHECKING:
    import argparse

    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.ledger.access import LedgerHandle

LINE_USAGE = (
    "usage: %mercury tasks | %mercury show ID | %mercury stop ID | %mercury undo ID | "
    "%mercury continue [ID] "
    "[--model M] [--fallback M2]... [--max-steps N] [--workdir DIR] [--api-base URL] [--yes]"
)
TASKS_SHOWN = 50
"""Most tasks ``%mercury tasks`` lists (the most recently updated)."""
TABLE_WIDTH = 88
"""Where ``%mercury tasks`` wraps a row (on word boundaries): narrower than a notebook's
output area, which would otherwise break long lines inside words."""


class MagicsHost(Protocol):
    """What the line magic uses of :class:`~mercury_nb.kernel.magics.MercuryMagics`."""

    def parse_flags(self, line: str) -> argparse.Namespace: ...

    def _config(self, args: argparse.Namespace) -> MercuryConfig: ...

    def submit_cell(self, task: str, args: argparse.Namespace, *, resume: bool = False,
                    task_id: str | None = None, words: str | None = None) -> Any: ...


class NothingToWait:
    """What a ``--wait`` cell awaits when nothing was started (a refusal was printed)."""

    def __await__(self) -> Generator[Any, None, None]:
        yield from ()

    def __repr__(self) -> str:
        return ""


def recover_at_load(settings_values: dict[str, Any]) -> None:
    """``%load_ext``: open the ledger, pause tasks of dead processes, tell the user what
    happened. Never raises: the extension always loads."""
    try:
        from mercury_nb.contract.home import home_of
        from mercury_nb.ledger.access import startup

        report = startup(home_of(base=settings_values))
        for line in report.notices:
            print(line)
    except Exception as error:  # pragma: no cover - startup already turns errors into notices
        print(f"mercury: the work ledger was not checked ({type(error).__name__}: {error}).")


def ledger_printing_notices(config: MercuryConfig) -> LedgerHandle | None:
    """The ledger at ``config.home`` after a startup pass (notices printed), or None.
    Finished tasks are pruned by the writer thread when a task ends, not here."""
    from mercury_nb import runs

    return runs.ledger_for(config, print)


def line_command(magics: MagicsHost, line: str) -> Any:
    """``%mercury tasks``, ``%mercury show ID`` or ``%mercury continue [ID] [flags]``."""
    try:
        words = shlex.split(line)
    except ValueError as error:
        raise UsageError(f"{error}\n{LINE_USAGE}") from None
    command, rest = (words[0], words[1:]) if words else ("tasks", [])
    match command:
        case "tasks" | "list":
            if rest:
                raise UsageError(LINE_USAGE)
            return _show_tasks(magics)
        case "show":
            if len(rest) != 1:
                raise UsageError(f"%mercury show needs one task id\n{LINE_USAGE}")
            return _show_one(magics, rest[0])
        case "stop":
            if len(rest) != 1:
                raise UsageError(f"%mercury stop needs one task id\n{LINE_USAGE}")
            return _stop(magics, rest[0])
        case "undo":
            if len(rest) != 1:
                raise UsageError(f"%mercury undo needs one task id\n{LINE_USAGE}")
            return _undo(magics, rest[0])
        case "continue" | "resume":
            task_id = rest[0] if rest and not rest[0].startswith("-") else None
            flags = rest[1:] if task_id else rest
            return _continue(magics, task_id, flags)
        case _:
            raise UsageError(f"unknown %mercury command {command!r}\n{LINE_USAGE}")


def _settings_handle(magics: MagicsHost) -> LedgerHandle | None:
    config = magics._config(_flags(magics, ""))
    return ledger_printing_notices(config)


def _flags(magics: MagicsHost, line: str) -> argparse.Namespace:
    try:
        return magics.parse_flags(line)
    except (UsageError, ValueError, SystemExit) as error:
        raise UsageError(f"{error}\n{LINE_USAGE}") from None


def _show_tasks(magics: MagicsHost) -> None:
    from mercury_nb import runs
    from mercury_nb.ledger.listing import tasks_table

    handle = _settings_handle(magics)
    if handle is not None:
        print(tasks_table(runs.recent_tasks(handle, TASKS_SHOWN), time.time(), TABLE_WIDTH))


def _show_one(magics: MagicsHost, task_id: str) -> None:
    from mercury_nb import runs
    from mercury_nb.ledger.listing import task_detail_text

    handle = _settings_handle(magics)
    if handle is None:
        return
    shown = runs.show_task(handle, task_id)
    if isinstance(shown, runs.Refusal):
        raise UsageError(shown.message)
    print(task_detail_text(shown.record, shown.event_rows, time.time(), shown.subagents))


def _stop(magics: MagicsHost, task_id: str) -> None:
    """``%mercury stop ID``: a stop request the owning process honours within a second.
    A task that is not running (or unknown) is a usage error naming why."""
    from mercury_nb.runs import request_stop

    handle = ledger_printing_notices(magics._config(_flags(magics, "")))
    if handle is None:
        return  # ledger_printing_notices printed why the ledger could not be opened
    reply = request_stop(task_id, handle=handle)
    if reply.kind != "requested":
        raise UsageError(reply.message)
    print(reply.message)


def _undo(magics: MagicsHost, task_id: str) -> None:
    """``%mercury undo ID``: the task's file changes taken back (a file changed since is left
    and named); an unknown or running task is a usage error naming why."""
    from mercury_nb import runs

    report = runs.undo(task_id, magics._config(_flags(magics, "")))
    if isinstance(report, runs.Refusal):
        raise UsageError(report.message)
    print(report.text())


def _continue(magics: MagicsHost, task_id: str | None, flags: list[str]) -> Any:
    args = _flags(magics, " ".join(shlex.quote(flag) for flag in flags))
    args.wait = False
    return magics.submit_cell("", args, resume=True, task_id=task_id)
