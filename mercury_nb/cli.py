"""The headless command line: ``python -m mercury_nb run "TASK" [options]``."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from mercury_nb.agent.events import AgentEvent, TaskFinished
from mercury_nb.agent.outcome import TaskOutcome

EXIT_COMPLETED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PAUSED = 3


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mercury_nb",
        description="mercury-nb: a coding agent with an honest completion contract.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one task in a workspace and print its outcome")
    run.add_argument("task", help="what to do, in plain words")
    run.add_argument("--model", help="first model of the chain (litellm naming)")
    run.add_argument("--fallback", action="append", default=None, metavar="MODEL",
                     help="a fallback model; repeat for more")
    run.add_argument("--api-base", help="base URL of an OpenAI-compatible endpoint")
    run.add_argument("--workdir", type=Path, help="workspace root (default: current folder)")
    run.add_argument("--max-steps", type=int, help="model steps per step budget")
    run.add_argument("--chat", action="store_true", help="answer a question; no forced rounds")
    run.add_argument("--yes", action="store_true",
                     help="take ask_user's recommended option without waiting")
    run.add_argument("--json", action="store_true", help="print the outcome as JSON on stdout")
    return parser


def exit_code_for(outcome: TaskOutcome) -> int:
    if outcome.status == "completed":
        return EXIT_COMPLETED
    if outcome.status == "paused":
        return EXIT_PAUSED
    return EXIT_FAILED


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse already printed the usage message
        return EXIT_USAGE if stop.code else EXIT_COMPLETED
    if not args.task.strip():
        parser.print_usage(sys.stderr)
        print("error: the task is empty", file=sys.stderr)
        return EXIT_USAGE
    if args.max_steps is not None and args.max_steps < 1:
        parser.print_usage(sys.stderr)
        print("error: --max-steps must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    if args.workdir is not None and not args.workdir.is_dir():
        parser.print_usage(sys.stderr)
        print(f"error: --workdir {args.workdir} is not a folder", file=sys.stderr)
        return EXIT_USAGE

    from pydantic import ValidationError

    from mercury_nb.contract.config import MercuryConfig

    try:
        config = MercuryConfig.load(
            model=args.model,
            fallbacks=tuple(args.fallback) if args.fallback else None,
            api_base=args.api_base,
            workdir=args.workdir,
            max_steps=args.max_steps,
            mode="chat" if args.chat else None,
            auto_yes=True if args.yes else None,
        )
    except ValidationError as error:
        print(f"error: invalid configuration: {error}", file=sys.stderr)
        return EXIT_USAGE
    outcome = asyncio.run(_run(args.task, config, quiet=args.json))
    if args.json:
        print(outcome.model_dump_json(indent=2))
    else:
        print(outcome.banner)
    return exit_code_for(outcome)


async def _run(task: str, config: object, *, quiet: bool) -> TaskOutcome:
    from mercury_nb.agent.loop import run_task
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.ui.plain import PlainView

    assert isinstance(config, MercuryConfig)
    if quiet:
        return await run_task(task, config, on_event=_ignore)
    view = PlainView(max_updates_per_s=config.ui_max_updates_per_s, attached=True,
                     stream=sys.stderr)

    def progress(event: AgentEvent) -> None:
        if not isinstance(event, TaskFinished):  # the banner goes to stdout, once
            view.on_event(event)

    try:
        return await run_task(task, config, on_event=progress)
    finally:
        view.close()


def _ignore(event: AgentEvent) -> None:
    return None
