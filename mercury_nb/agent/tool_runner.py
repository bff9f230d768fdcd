"""Executes one step's tool calls in order, logs them for the contract and emits progress."""

from __future__ import annotations

import json
from collections.abc import Sequence

from mercury_nb.agent.events import EventSink, ToolFinished, ToolStarted
from mercury_nb.agent.prompts import summarize_arguments, tool_message
from mercury_nb.agent.session import TaskSession, ToolLogEntry
from mercury_nb.contract.gate.command_effects import is_read_only_command
from mercury_nb.contract.gate.verification import is_verification_command
from mercury_nb.contract.turns.stream_assembly import AssembledToolCall
from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.registry import MUTATING_TOOLS, ToolRegistry


def counts_as_mutation(name: str, result: ToolResult) -> bool:
    """File tools mutate; a command mutates unless it is a check or provably read-only; any
    other tool mutates when it reports changed paths (delegate_task after a sub-agent's edits)."""
    if name != "run_command":
        return name in MUTATING_TOOLS or bool(result.changed_paths)
    command = result.command or ""
    return not (is_verification_command(command) or is_read_only_command(command))


def command_of(name: str, raw_arguments: str) -> str | None:
    """The command line of a run_command call (None for other tools or unreadable args)."""
    if name != "run_command":
        return None
    try:
        args = json.loads(raw_arguments or "{}")
    except (ValueError, TypeError):
        return None
    command = args.get("command") if isinstance(args, dict) else None
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
        on_event(ToolStarted(step=step, name=call.name, summary=summary,
                             command=command_of(call.name, call.arguments)))
        result = await registry.execute(call.name, call.arguments, ctx)
        session.messages.append(tool_message(call.id, call.name, result.content))
        session.log(
            ToolLogEntry(
                seq=session.next_seq(),
                step=step,
                name=call.name,
                ok=result.ok,
                mutating=counts_as_mutation(call.name, result),
                summary=summary,
                result_head=result.content[:500],
                command=result.command,
                exit_code=result.exit_code,
                timed_out=result.timed_out,
                changed_paths=result.changed_paths,
            )
        )
        on_event(ToolFinished(step=step, name=call.name, ok=result.ok, summary=summary))
        results.append((call, result))
    return results
