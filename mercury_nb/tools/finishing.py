"""The finish tool: the model's typed end of a turn (done, blocked, a question to the user, or
no change needed: the task only asked for an answer)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from mercury_nb.contract.turns.final_reply import FinishCall
from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.function_tool import FunctionTool

__all__ = ["FINISH_TOOL", "FINISH_TOOL_NAME", "FinishArgs", "finish"]

FINISH_TOOL_NAME = "finish"


class FinishArgs(BaseModel):
    status: Literal["done", "blocked", "question", "no_change"]
    summary: str | None = Field(default=None, description="What you did, or the answer.")
    blocker: str | None = Field(default=None, description="If blocked: what stops you.")
    question: str | None = Field(default=None, description="If question: ask the user.")


async def finish(args: FinishArgs, ctx: ToolContext) -> ToolResult:
    """Hands the loop the typed end; the loop ends the turn and asks the model nothing more."""
    detail = (args.blocker if args.status == "blocked" else args.question) or ""
    call = FinishCall(args.status, args.summary or "", detail)
    return ToolResult(ok=True, content=f"finished: {args.status}", finish=call)


FINISH_TOOL = FunctionTool(
    name=FINISH_TOOL_NAME,
    description=(
        "End your turn. status done: the work is finished and checked; blocked: you "
        "cannot go on; question: you need the user's answer; no_change: the task asks "
        "only for an answer and needs no change (the answer in summary)."
    ),
    args_model=FinishArgs,
    handler=finish,
)
