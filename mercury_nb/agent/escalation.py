"""The loop's escalation I/O: the agent-made grounding listing and doom-loop step observations."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mercury_nb.agent.prompts import user_message
from mercury_nb.contract.escalation.doom_loop import (
    StepObservation,
    ToolCallObservation,
    canonical_arguments,
)
from mercury_nb.contract.escalation.guard_texts import format_grounding
from mercury_nb.contract.turns.stream_assembly import AssembledToolCall, StepReply
from mercury_nb.tools.base import ToolResult
from mercury_nb.workspace.dirfd import list_folder


def list_workspace(root: Path) -> list[tuple[str, bool]]:
    """The workspace root's entries as ``(name, is_dir)``, sorted by name; no model involved."""
    return list_folder(root, root)


async def grounding_message(root: Path, limit: int) -> dict[str, Any]:
    """The agent-executed grounding message: the header, then the first ``limit`` entries."""
    entries = await asyncio.to_thread(list_workspace, root)
    return user_message(format_grounding(str(root), entries, limit))


def step_observation(
    reply: StepReply, results: Sequence[tuple[AssembledToolCall, ToolResult]]
) -> StepObservation:
    """What the doom-loop detector sees of a step: the calls that ran (canonical arguments,
    success) and the step's text. A step whose calls did not run is a step without action."""
    calls = tuple(
        ToolCallObservation(call.name, canonical_arguments(call.arguments), result.ok)
        for call, result in results
    )
    return StepObservation(tool_calls=calls, text=reply.text)
