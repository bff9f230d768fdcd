"""The CLI's ``run`` and ``continue``: one request through the runs layer's door, then its banner.

The request carries the flags as given; :func:`~mercury_nb.runs.resolve.resolve` checks them
once (empty task, ``--max-steps``, ``--workdir``, settings, a missing API key) and each typed
refusal is worded here the way the CLI always said it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from typing import Any

from mercury_nb.agent.events import AgentEvent, TaskFinished
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.runs.lookup import Refusal
from mercury_nb.runs.registry import Run
from mercury_nb.runs.request import RunRequest

UsageError = Callable[[str], int]
"""The CLI's usage error: prints the usage and the text, answers the exit code."""


def submit_command(args: argparse.Namespace, flags: dict[str, Any], *, usage_error: UsageError,
                   refuse: Callable[[Refusal], int], exit_usage: int, exit_failed: int,
                   exit_code_for: Callable[[TaskOutcome], int]) -> int:
    """``run`` / ``continue`` through :func:`~mercury_nb.runs.runner.submit`: the refusal's
    words (and exit code), or the task run to its end here with its banner on stdout."""
    from mercury_nb.runs import submit
    from mercury_nb.runs.exit_signals import StopOnSignals
    from mercury_nb.ui.plain import PlainView, banner_with_footer
    from mercury_nb.ui.terminal_approver import terminal_approver

    resume = args.command != "run"
    as_json = bool(args.json)
    views: list[PlainView] = []

    def view_for(config: Any) -> tuple[Any, None]:
        if as_json:
            return _ignore, None
        view = PlainView(max_updates_per_s=config.ui_max_updates_per_s, attached=True,
                         stream=sys.stderr)
        views.append(view)

        def progress(event: AgentEvent) -> None:
            if not isinstance(event, TaskFinished):  # the banner goes to stdout, once
                view.on_event(event)

        return progress, None

    request = RunRequest(task="" if resume else args.task, resume=resume,
                         task_id=args.id if resume else None,
                         words=args.message if resume else None, flags=flags,
                         view_for=view_for, refuse_missing_key=True, prune_ledger=True,
                         approver=terminal_approver(), approver_in="terminal",
                         report=lambda line: print(line, file=sys.stderr))
    with asyncio.Runner() as loop_runner:
        run = submit(request, loop=loop_runner.get_loop())
        if isinstance(run, Refusal):
            return _refused(run, args, usage_error=usage_error, refuse=refuse,
                            exit_usage=exit_usage)
        with StopOnSignals(run.config.shutdown_grace_s, exit_failed, as_json=as_json) as signals:
            signals.attach(run)
            try:
                outcome = loop_runner.run(_outcome(run))
            finally:
                for view in views:
                    view.close()
            signals.settle()  # a forced exit that already began prints instead
            if as_json:
                print(outcome.model_dump_json(indent=2), flush=True)
            else:
                print(banner_with_footer(outcome), flush=True)
            if run.handle is not None:
                run.handle.flush()  # the final row is written while late signals are ignored
    return exit_code_for(outcome)


async def _outcome(run: Run) -> TaskOutcome:
    return await run.outcome()


def _refused(refusal: Refusal, args: argparse.Namespace, *, usage_error: UsageError,
             refuse: Callable[[Refusal], int], exit_usage: int) -> int:
    """The CLI's words for each refusal (its usage errors as they always read)."""
    match refusal.kind:
        case "empty-task":
            return usage_error("the task is empty")
        case "bad-max-steps":
            return usage_error(refusal.message)
        case "bad-workdir" if args.workdir is not None:
            return usage_error(f"--workdir {args.workdir} is not a folder")
        case "bad-workdir":
            print(f"error: invalid configuration: {refusal.message}", file=sys.stderr)
            return exit_usage
        case "bad-settings":
            print(f"error: invalid configuration: {refusal.message}", file=sys.stderr)
            return exit_usage
        case "missing-key":
            # the banner a cell shows; nothing starts, no request (a resumed task, already
            # claimed, ends through the loop with the same banner and stays resumable)
            print(refusal.message, file=sys.stderr)
            return exit_usage
        case _:
            return refuse(refusal)


def _ignore(event: AgentEvent) -> None:
    return None
