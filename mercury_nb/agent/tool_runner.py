"""Executes one step's tool calls in order, logs them for the contract and emits progress."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from mercury_nb.agent.events import EventSink, ToolFinished, ToolProgress, ToolStarted
from mercury_nb.agent.permission_gate import call_arguments, permission_for
from mercury_nb.agent.prompts import summarize_arguments, tool_message
from mercury_nb.agent.session import TaskSession, ToolLogEntry
from mercury_nb.contract.gate.command_effects import is_read_only_command
from mercury_nb.contract.gate.verification import is_verification_command
from mercury_nb.contract.permissions import denied_text
from mercury_nb.contract.redaction import displayable, known_secrets, redact
from mercury_nb.contract.text_cut import clip, fit_head_and_tail
from mercury_nb.contract.turns.stream_assembly import AssembledToolCall
from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.budget import result_budget
from mercury_nb.tools.registry import MUTATING_TOOLS, ToolRegistry


def counts_as_mutation(name: str, result: ToolResult) -> bool:
    """File tools mutate; a command mutates unless it is a check or provably read-only; any
    other tool mutates when it reports changed paths (delegate_task after a sub-agent's edits)."""
    if name != "run_command":
        return name in MUTATING_TOOLS or bool(result.changed_paths)
    command = result.command or ""
    return not (is_verification_command(command) or is_read_only_command(command))


TOOL_RESULT_CUT = (
    "[… {cut:,} characters cut from the middle of this result to fit the model's context; "
    "run a narrower command or read a smaller part if you need them …]"
)


def cap_text(text: str, limit: int) -> str:
    """``text`` whole when it fits ``limit``, else its head and tail around a note, the note
    included in ``limit``."""
    return fit_head_and_tail(text, limit, lambda cut: TOOL_RESULT_CUT.format(cut=cut))


def clean_result(result: ToolResult, ctx: ToolContext) -> ToolResult:
    """``result`` as it may be sent to a model: cut to the context's result budget, secrets
    (the API key, the values of ``*_API_KEY`` / ``*_TOKEN`` / ``*_SECRET*`` / ``*_PASSWORD``
    variables, key-shaped tokens) masked, and undecodable bytes of file names shown as
    ``\\xNN`` escapes."""
    secrets = known_secrets(ctx.config, os.environ)
    content = cap_text(redact(displayable(result.content), secrets), result_budget(ctx))
    paths = tuple(displayable(p) for p in result.changed_paths)
    command = redact(displayable(result.command), secrets) if result.command else result.command
    if (content, paths, command) == (result.content, result.changed_paths, result.command):
        return result
    return replace(result, content=content, changed_paths=paths, command=command)


def command_of(name: str, args: dict[str, Any]) -> str | None:
    """The command line of a run_command call (None for other tools or unreadable args),
    from its arguments as the tool reads them (``call_arguments``)."""
    command = args.get("command") if name == "run_command" else None
    return command if isinstance(command, str) else None


async def run_tool_calls(
    calls: Sequence[AssembledToolCall],
    session: TaskSession,
    registry: ToolRegistry,
    ctx: ToolContext,
    on_event: EventSink,
) -> list[tuple[AssembledToolCall, ToolResult]]:
    """Run every call, append one tool message per call, and log each for the gate."""
    results: list[tuple[AssembledToolCall, ToolResult]] = []
    step = session.steps_total
    for call in calls:
        summary = summarize_arguments(call.name, call.arguments)
        args = call_arguments(call.arguments)  # read once, as the tool will read them
        command = command_of(call.name, args)
        on_event(ToolStarted(step=step, name=call.name, summary=summary, command=command))
        denied = await permission_for(call.name, command, call.arguments, ctx, session, step,
                                      on_event)
        ctx.progress, ctx.step = _progress(on_event, step, call.name), step
        target = args.get("path")
        if (denied is None and ctx.before_write is not None and isinstance(target, str)
                and registry.is_mutating(call.name)):  # its "before", if the snapshot lacks it
            await asyncio.to_thread(ctx.before_write, target)
        try:
            result = (ToolResult(ok=False, content=denied_text(denied))  # it never ran: no check
                      if denied is not None
                      else await registry.execute(call.name, call.arguments, ctx))
            result = clean_result(result, ctx)
        finally:
            ctx.progress = ctx.step = None
        session.messages.append(tool_message(call.id, call.name, result.content))
        session.log(
            ToolLogEntry(
                seq=session.next_seq(),
                step=step,
                name=call.name,
                ok=result.ok,
                mutating=counts_as_mutation(call.name, result),
                summary=summary,
                result_head=clip(result.content, 500, mark=""),
                command=result.command,
                exit_code=result.exit_code,
                timed_out=result.timed_out,
                changed_paths=result.changed_paths,
                read_paths=result.read_paths,
                ran_in_kernel=result.ran_in_kernel,
                notebook_run=result.notebook_run,
                cells_run=result.cells_run,
                cell_error=result.cell_error,
                kernel_run=result.kernel_run,
                kernel_cells=result.kernel_cells,
                kernel_numbers=result.kernel_numbers,
                changed_cells=result.changed_cells,
            )
        )
        on_event(ToolFinished(step=step, name=call.name, ok=result.ok, summary=summary))
        results.append((call, result))
    return results


def _progress(on_event: EventSink, step: int, name: str) -> Callable[[str], None]:
    """The call's progress callback: each line is a :class:`ToolProgress` event."""
    return lambda text: on_event(ToolProgress(step=step, name=name, text=str(text)))
