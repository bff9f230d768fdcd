"""The command line: ``python -m mercury_nb run|continue|stop|tasks|show|undo|permissions``.

Every command first opens the work ledger (``$MERCURY_HOME/ledger.sqlite3``), pauses tasks
that a dead process left running and prunes old finished ones; what it found goes to stderr.
Exit codes: 0 completed (or listed), 3 paused (also when a paused task's text is sent again),
1 failed or aborted (also by SIGTERM, SIGHUP or SIGINT, which end the task like Stop and print
its outcome), 2 bad arguments or nothing to do (nothing started).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.permissions import PERMISSION_MODES

if TYPE_CHECKING:
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.ledger.access import LedgerHandle
    from mercury_nb.runs import Refusal

EXIT_COMPLETED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PAUSED = 3


def _model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="first model of the chain (litellm naming)")
    parser.add_argument("--fallback", action="append", default=None, metavar="MODEL",
                        help="a fallback model; repeat for more")
    parser.add_argument("--api-base", help="base URL of an OpenAI-compatible endpoint")
    parser.add_argument("--workdir", type=Path, help="workspace root (default: current folder)")
    parser.add_argument("--max-steps", type=int, help="model steps per step budget")
    parser.add_argument("--max-cost", type=float, dest="max_cost_usd", metavar="USD",
                        help="pause once the task's estimated cost reaches USD (every model "
                             "and sub-agent; a continue may raise it)")
    parser.add_argument("--max-tokens", type=int, metavar="N",
                        help="pause once the task has used N tokens (every model and "
                             "sub-agent; a continue may raise it)")
    parser.add_argument("--yes", action="store_true",
                        help="take ask_user's recommended option without waiting")
    parser.add_argument("--pass-env", action="append", default=None, metavar="NAME",
                        help="hand the variable NAME to commands although it is withheld as "
                             "a secret; repeat for more")
    parser.add_argument("--sandbox", choices=("off", "workspace-write"), default=None,
                        help="workspace-write: every command under bubblewrap (read-only but "
                             "the workspace and a private /tmp; no network)")
    parser.add_argument("--sandbox-network", action="store_true",
                        help="let sandboxed commands reach the network")
    parser.add_argument("--permissions", choices=PERMISSION_MODES, default=None, metavar="MODE",
                        help="what the agent may do unasked: read-only, ask, edits (default: "
                             "edits run, commands ask) or auto (everything)")
    parser.add_argument("--allow", action="append", default=None, metavar="RULE",
                        help='run commands matching RULE unasked (a glob over the whole '
                             'command, e.g. "python -m pytest*"); repeat for more')
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON on stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mercury_nb",
        description="mercury-nb: a coding agent with an honest completion contract.",
    )
    from mercury_nb import __version__

    parser.add_argument("--version", action="version", version=f"mercury-nb {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one task in a workspace and print its outcome")
    run.add_argument("task", help="what to do, in plain words")
    _model_flags(run)
    run.add_argument("--chat", action="store_true", help="answer a question; no forced rounds")
    resume = sub.add_parser(
        "continue", help="resume a paused task (default: the latest paused one of the workspace)"
    )
    resume.add_argument("id", nargs="?", help="task id (or a unique prefix of it)")
    resume.add_argument("--message", metavar="WORDS",
                        help='what to tell the task beyond "continue" (e.g. "use pytest")')
    _model_flags(resume)
    stop = sub.add_parser("stop", help="stop a running task, whichever process runs it")
    stop.add_argument("id", help="task id (or a unique prefix of it)")
    tasks = sub.add_parser("tasks", help="list the tasks in the work ledger")
    tasks.add_argument("--json", action="store_true", help="print the tasks as JSON")
    show = sub.add_parser("show", help="show one task of the work ledger")
    show.add_argument("id", help="task id (or a unique prefix of it)")
    show.add_argument("--json", action="store_true", help="print the task as JSON")
    from mercury_nb.cli_undo import add_undo_parser as add_undo

    add_undo(sub)
    from mercury_nb.cli_permissions import add_permissions_parser as add_permissions

    add_permissions(sub)
    return parser


def exit_code_for(outcome: TaskOutcome) -> int:
    if outcome.status == "completed":
        return EXIT_COMPLETED
    if outcome.status == "paused":
        return EXIT_PAUSED
    return EXIT_FAILED


def _usage_error(parser: argparse.ArgumentParser, text: str) -> int:
    parser.print_usage(sys.stderr)
    print(f"error: {text}", file=sys.stderr)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line. What it prints for humans is stripped of terminal control
    sequences (model text, file names and command output are untrusted); ``--json``
    output on stdout stays exact."""
    from mercury_nb.ui.terminal import terminal_safe_streams

    words = list(sys.argv[1:] if argv is None else argv)
    with terminal_safe_streams(stdout="--json" not in words):
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse already printed the usage message
        return EXIT_USAGE if stop.code else EXIT_COMPLETED
    if args.command in ("run", "continue"):
        from mercury_nb.cli_run import submit_command

        try:
            return submit_command(
                args, run_flags(args), usage_error=lambda text: _usage_error(parser, text),
                refuse=lambda refusal: _refuse(refusal, as_json=args.json),
                exit_usage=EXIT_USAGE, exit_failed=EXIT_FAILED, exit_code_for=exit_code_for)
        finally:
            from mercury_nb.ledger.access import close_all

            close_all()  # every queued write lands; the WAL is folded back into the file

    from pydantic import ValidationError

    from mercury_nb.runs import plan

    flags = run_flags(args)
    try:
        config = plan(flags)
    except ValidationError as error:
        print(f"error: invalid configuration: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "undo":
        from mercury_nb.cli_undo import undo_command

        try:
            return undo_command(config, args.id, as_json=args.json)
        finally:
            from mercury_nb.ledger.access import close_all

            close_all()
    handle = _open_ledger(config)
    try:
        match args.command:
            case "tasks":
                return _list(handle, as_json=args.json)
            case "show":
                return _show(handle, args.id, as_json=args.json)
            case "permissions":
                from mercury_nb.cli_permissions import permissions_command

                return permissions_command(handle, config, args.revoke)
            case _:
                return _stop(handle, args.id)
    finally:
        from mercury_nb.ledger.access import close_all

        close_all()  # every queued write lands; the WAL is folded back into the file


def run_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The settings flags of ``run`` / ``continue`` as given (see ``runs.plan``)."""
    names = ("model", "fallback", "api_base", "workdir", "max_steps", "chat", "yes", "pass_env",
             "sandbox", "sandbox_network", "max_cost_usd", "max_tokens", "permissions", "allow")
    return {name: getattr(args, name) for name in names if hasattr(args, name)}


def _stop(handle: LedgerHandle | None, task_id: str) -> int:
    from mercury_nb.runs import request_stop

    if handle is None:
        return _unreadable_ledger("no task can be stopped")
    reply = request_stop(task_id, handle=handle)
    print(reply.message, file=sys.stdout if reply.kind == "requested" else sys.stderr)
    return EXIT_COMPLETED if reply.kind == "requested" else EXIT_USAGE


def _open_ledger(config: MercuryConfig) -> LedgerHandle | None:
    from mercury_nb.ledger.access import startup

    report = startup(config.home, keep_finished=config.ledger_keep_finished,
                     keep_days=config.ledger_keep_days)
    for line in report.notices:
        print(line, file=sys.stderr)
    return report.handle


def _refuse(refusal: Refusal, *, as_json: bool) -> int:
    record = refusal.record
    if not refusal.paused or record is None:
        print(refusal.message, file=sys.stderr)
        return EXIT_USAGE
    if as_json:
        outcome = TaskOutcome.model_validate({
            "task_id": record.id, "task": record.task, "status": "paused",
            "verdict": record.verdict, "answer": None, "banner": refusal.message,
            "blocker": record.blocker, "changes": record.changes, "evidence": record.evidence,
            "steps": record.steps, "models": list(record.models),
        })
        print(outcome.model_dump_json(indent=2))
    else:
        print(refusal.message)
    return EXIT_PAUSED


def _unreadable_ledger(consequence: str = "no tasks can be listed") -> int:
    """``tasks`` / ``show`` / ``stop`` without a ledger: the reason went to stderr; never
    "No tasks"."""
    print(f"error: the work ledger could not be opened, so {consequence} "
          "(see the message above)", file=sys.stderr)
    return EXIT_FAILED


def _list(handle: LedgerHandle | None, *, as_json: bool) -> int:
    from mercury_nb.ledger.listing import tasks_table

    if handle is None:
        return _unreadable_ledger()
    from mercury_nb import runs

    records = runs.recent_tasks(handle)
    if as_json:
        print(json.dumps([record.to_json() for record in records], indent=2,
                         ensure_ascii=False))
    else:
        print(tasks_table(records, time.time()))
    return EXIT_COMPLETED


def _show(handle: LedgerHandle | None, task_id: str, *, as_json: bool) -> int:
    from mercury_nb import runs
    from mercury_nb.ledger.listing import task_detail_text

    if handle is None:
        return _unreadable_ledger()
    shown = runs.show_task(handle, task_id)
    if isinstance(shown, runs.Refusal):
        print(shown.message, file=sys.stderr)
        return EXIT_USAGE
    if as_json:
        data: dict[str, Any] = {**shown.record.to_json(),
                                "events": [e.to_json() for e in shown.event_rows],
                                "subagents": [sub.id for sub in shown.subagents]}
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(task_detail_text(shown.record, shown.event_rows, time.time(), shown.subagents))
    return EXIT_COMPLETED
