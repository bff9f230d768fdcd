"""inspect_variables and run_in_kernel: the user's kernel, for a task from a ``%%mercury`` cell.

Both are offered only when the task has a kernel (``ToolContext.kernel``, injected by the
cell through the runs layer). ``inspect_variables`` describes the namespace by known-safe
summaries (:mod:`~mercury_nb.tools.variables`); ``run_in_kernel`` runs Python there in a
stoppable worker thread (:mod:`~mercury_nb.tools.kernel_code`), refused while another cell
of the kernel runs, and returns stdout, stderr, the result's safe summary, the displays
and the traceback, bounded and redacted. It counts as a mutating action.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, Field

from mercury_nb.contract.redaction import redact
from mercury_nb.tools.base import ToolContext, ToolError, ToolResult
from mercury_nb.tools.budget import result_budget
from mercury_nb.tools.function_tool import FunctionTool
from mercury_nb.tools.kernel_access import KernelAccess, kernel_secrets
from mercury_nb.tools.kernel_code import (
    CodeInterrupted,
    CodeRun,
    mark_stopped,
    running_elsewhere,
)
from mercury_nb.tools.value_summary import cut, summarize_value
from mercury_nb.tools.variables import (
    NO_KERNEL,
    describe,
    limits_of,
    listed_names,
    namespace_heading,
    summarize_namespace,
)

OTHER_CELL = ("another cell of this kernel is executing; run_in_kernel does not interleave "
              "with the user's cells. Try again once it has finished, or do the work with files.")
STILL_RUNNING = ("code from an earlier run_in_kernel call is still running in the kernel "
                 "(it could not be interrupted); nothing else runs until it returns")
NOT_INTERRUPTED = ("The code run in your kernel could not be interrupted (it is inside native "
                   "code); it keeps running in a background thread until that call returns.")
STOPPED = "Stopped the code running in your kernel."
STOPPED_LINE = "Also: the code it was running in your kernel was stopped."
DISPLAYS_SHOWN = 10


class InspectVariablesArgs(BaseModel):
    names: list[str] | None = Field(
        default=None,
        description="Variables to describe; omit for every variable of the user's namespace.")


class RunInKernelArgs(BaseModel):
    code: str = Field(description="Python to run in the user's namespace; the value of a "
                                  "last expression is summarised.")


def _kernel(ctx: ToolContext) -> KernelAccess:
    if ctx.kernel is None:
        raise ToolError(NO_KERNEL)
    return ctx.kernel


async def inspect_variables(args: InspectVariablesArgs, ctx: ToolContext) -> ToolResult:
    """Runs on the kernel's loop, so the namespace does not change while it is read."""
    kernel = _kernel(ctx)
    namespace, hidden = kernel.namespace(), kernel.hidden_names()
    config = ctx.config
    report = summarize_namespace(
        namespace, hidden=hidden, names=args.names, limits=limits_of(config),
        secrets=kernel_secrets(config, kernel),
        max_chars=min(config.kernel_summary_max_chars, result_budget(ctx)))
    if args.names is not None:
        return ToolResult(ok=bool(report.shown), content=report.text)
    heading = namespace_heading(report, len(listed_names(namespace, hidden)))
    return ToolResult(ok=True, content=f"{heading}\n{report.text}".rstrip())


async def run_in_kernel(args: RunInKernelArgs, ctx: ToolContext) -> ToolResult:
    kernel = _kernel(ctx)
    if kernel.other_cell_running():
        raise ToolError(OTHER_CELL)
    if running_elsewhere() is not None:
        raise ToolError(STILL_RUNNING)
    config = ctx.config
    run = CodeRun(args.code, kernel, config.kernel_output_max_chars, scope=ctx.process_scope)
    in_time, ended = await run_within_limit(run, ctx)
    return _result(run, ctx, timed_out=not in_time, ended=ended)


async def run_within_limit(run: CodeRun, ctx: ToolContext) -> tuple[bool, bool]:
    """Run ``run`` within ``kernel_code_timeout_s``: whether it finished in time, and whether
    the code ended (an interrupted run waits ``kernel_stop_grace_s`` for it). A Stop (the
    task cancelled) interrupts the code the same way, says whether it ended, and re-raises."""
    config = ctx.config
    done = run.start()
    try:
        await asyncio.wait_for(asyncio.shield(done), config.kernel_code_timeout_s)
    except TimeoutError:
        return False, await run.stop(done, config.kernel_stop_grace_s)
    except asyncio.CancelledError:  # Stop: the code ends with the task
        ended = await run.stop(done, config.kernel_stop_grace_s)
        if ended:  # else the ending says it could not be interrupted, not that it stopped
            mark_stopped(ctx.process_scope)
        if ctx.notice is not None:
            ctx.notice(STOPPED if ended else NOT_INTERRUPTED)
        raise
    return True, True


def _result(run: CodeRun, ctx: ToolContext, *, timed_out: bool = False,
            ended: bool = True) -> ToolResult:
    config = ctx.config
    secrets = kernel_secrets(config, _kernel(ctx))  # masked before every cut below
    took = (run.ended or run.started) - run.started if ended else config.kernel_code_timeout_s
    lines: list[str] = []
    if timed_out:
        limit = f"{config.kernel_code_timeout_s:g} s"
        lines.append(f"Stopped at the time limit ({limit}, kernel_code_timeout_s)."
                     if ended else f"Still running after the time limit ({limit}): "
                     f"{NOT_INTERRUPTED}")
    elif run.error is None:
        lines.append(f"Ran in your kernel in {took:.1f} s.")
    else:
        lines.append(f"Ran in your kernel in {took:.1f} s and raised "
                     f"{type(run.error).__name__}.")
    for label, text in (("stdout", run.stdout.text(secrets)),
                        ("stderr", run.stderr.text(secrets))):
        if text:
            lines.extend((f"{label}:", text.rstrip("\n")))
    if run.displays:
        lines.append("displays:")
        lines.extend(f"- {describe_display(bundle, config.kernel_repr_chars, secrets)}"
                     for bundle in run.displays[:DISPLAYS_SHOWN])
        if len(run.displays) > DISPLAYS_SHOWN:
            lines.append(f"- … {len(run.displays) - DISPLAYS_SHOWN} more")
    if run.has_value and run.value is not None:
        lines.append("result: " + describe("value", summarize_value(
            run.value, replace(limits_of(config), secrets=secrets)))
                     .removeprefix("value: "))
    if run.traceback and not isinstance(run.error, CodeInterrupted):
        lines.extend(("traceback:", cut(run.traceback.rstrip("\n"),
                                        config.kernel_output_max_chars, secrets)))
    content = redact("\n".join(lines), secrets)
    ok = run.error is None and not timed_out
    return ToolResult(ok=ok, content=content, ran_in_kernel=True)


def describe_display(bundle: Mapping[str, Any], limit: int,
                     secrets: tuple[str, ...] = ()) -> str:
    """One display output: an image by its type and size (``image/png 640×480``), else its
    text (``text/plain``), else the kinds it has."""
    for mime, data in bundle.items():
        if mime.startswith("image/"):
            size = png_size(data) if mime == "image/png" else None
            return f"{mime} {size[0]}×{size[1]}" if size else mime
    text = bundle.get("text/plain")
    if isinstance(text, str):
        return cut(" ".join(text.split()), limit, secrets)
    return ", ".join(str(mime) for mime in bundle) or "an empty display"


def png_size(data: Any) -> tuple[int, int] | None:
    """Width and height from a PNG's header (base64 text or bytes; None: not a PNG)."""
    try:
        raw = data if isinstance(data, bytes) else base64.b64decode(str(data)[:64] + "==")
    except (binascii.Error, ValueError):
        return None
    if raw[:8] != b"\x89PNG\r\n\x1a\n" or len(raw) < 24:
        return None
    return int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")


INSPECT_VARIABLES_TOOL: FunctionTool[InspectVariablesArgs] = FunctionTool(
    name="inspect_variables",
    description=(
        "Describe the variables of the user's kernel namespace (the notebook this task was "
        "started from): name and type, length or shape and dtype, a DataFrame's columns with "
        "dtypes and first rows, and a bounded repr. Values of unknown types show their type "
        "only. Give names to describe only those."),
    args_model=InspectVariablesArgs,
    handler=inspect_variables,
    brief="Describe the variables of the user's kernel.",
)

RUN_IN_KERNEL_TOOL: FunctionTool[RunInKernelArgs] = FunctionTool(
    name="run_in_kernel",
    description=(
        "Run Python code in the user's kernel namespace (like a scratch cell: inspect a "
        "column, try a transform). Variables it sets stay in the user's namespace. Returns "
        "stdout, stderr, the last expression's summary, display outputs and the traceback. "
        "Refused while another cell of the kernel is running; it has a time limit."),
    args_model=RunInKernelArgs,
    handler=run_in_kernel,
    mutating=True,
    brief="Run Python code in the user's kernel namespace.",
)

KERNEL_TOOLS = (INSPECT_VARIABLES_TOOL, RUN_IN_KERNEL_TOOL)
"""Offered only to a task with a kernel (a ``%%mercury`` cell)."""
