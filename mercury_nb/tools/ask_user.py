"""The ask_user pause tool: one confirmation for a large change, recommended option preselected."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field, model_validator

from mercury_nb.tools.base import AskHandler, ToolContext, ToolResult
from mercury_nb.tools.function_tool import FunctionTool

__all__ = ["ASK_USER_TOOL", "AskHandler", "AskUserArgs", "ask_user"]


class AskUserArgs(BaseModel):
    question: str = Field(description="One short question, with the plan in a sentence or two.")
    options: list[str] = Field(min_length=2, max_length=6, description="The choices offered.")
    recommended: str = Field(description="The option you recommend; it is preselected.")

    @model_validator(mode="after")
    def _recommended_is_an_option(self) -> AskUserArgs:
        if self.recommended not in self.options:
            raise ValueError(f"recommended must be one of the options: {self.options}")
        return self


async def ask_user(args: AskUserArgs, ctx: ToolContext) -> ToolResult:
    previous = ctx.asked
    if previous is not None:
        return ToolResult(
            ok=True,
            content=(
                f"You already asked the user once (answer: {previous}). Do not ask again — "
                "build it now."
            ),
        )
    config = ctx.config
    timeout = 0.0 if config.auto_yes else config.ask_user_timeout_s
    handler = ctx.ask_handler
    answer: str | None = None
    if handler is not None and not config.auto_yes:
        answer = await handler(args.question, list(args.options), args.recommended, timeout)
    elif timeout > 0:
        await asyncio.sleep(timeout)  # headless: nobody can answer; wait as configured
    if answer is None or answer not in args.options:
        answer = args.recommended
        how = "--yes was given" if config.auto_yes else f"no answer within {timeout:g}s"
        content = (
            f"{how}, so I took the recommended option: {answer}. "
            "Go on and build it now without asking again."
        )
    else:
        content = f"The user chose: {answer}. Go on and build it now without asking again."
    ctx.asked = answer
    notify = ctx.notice
    if notify is not None:
        notify(content.split(". Go on")[0] + ".")
    return ToolResult(ok=True, content=content)


ASK_USER_TOOL = FunctionTool(
    name="ask_user",
    description=(
        "Ask the user ONE confirmation question before a large or consequential change. "
        "Offer 2-6 options and name the recommended one. Use it at most once per task; "
        "never for small or medium changes."
    ),
    brief="Ask the user one question with options, at most once.",
    args_model=AskUserArgs,
    handler=ask_user,
)
