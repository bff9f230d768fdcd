"""run_cells: a notebook's cells run in a fresh kernel, each cell's outputs and error returned.

The cells (all, or a list or range) run in order in a child process the process registry
tracks (:mod:`mercury_nb.workspace.notebook_cells`), started as every command is (without the
secrets, in the config's sandbox), in the notebook's folder: a Stop or the total time limit
kills it, kernel and all. The pulse names the cell running (``cell 7/12``). The first failing
cell ends the run: it raised, it waited for input, it ran over ``notebook_timeout_s``, or the
kernel died. Outputs are written back into the notebook (validated, atomically) for each cell
whose source is still what ran. A run of every cell is a notebook check for the gate, as the
end-of-task check is; a run of some cells counts only when it fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from mercury_nb.contract.cell_spans import BadSelection, parse_cells, spans
from mercury_nb.contract.redaction import known_secrets, redact
from mercury_nb.tools import processes
from mercury_nb.tools.base import ToolContext, ToolError, ToolResult
from mercury_nb.tools.budget import result_budget
from mercury_nb.tools.cell_outputs import write_back
from mercury_nb.tools.command_launch import SandboxUnavailable, prepare
from mercury_nb.tools.files import head_tail
from mercury_nb.tools.function_tool import FunctionTool, workspace_of
from mercury_nb.tools.notebooks import notebook_at, outputs_text
from mercury_nb.tools.value_summary import cut
from mercury_nb.workspace.notebook_cells import failure_words, strip_ansi

BACKSTOP_S = 15.0
"""Seconds past the total time limit after which the child is killed whatever it is doing
(it ends the cell that runs over by itself; this covers a kernel that never started)."""
READ_LIMIT = 1 << 26
"""Longest line read from the child (one cell's outputs, images included)."""


class RunCellsArgs(BaseModel):
    path: str = Field(description="Notebook path (.ipynb) relative to the workspace root.")
    cells: str | None = Field(
        default=None,
        description="Cell indices and ranges (\"2-5\", \"0-3,7\") as read_notebook numbers "
        "them; omit for every cell. The kernel is fresh: include the cells they depend on.")

    @field_validator("cells", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        """A list of indices (as some models send it) reads as the same selection."""
        if isinstance(value, list) and all(isinstance(i, int) for i in value):
            return ",".join(str(i) for i in value)
        if isinstance(value, int):
            return str(value)
        return value


@dataclass
class _Run:
    """What the child reported so far."""

    current: int | None = None
    finished: list[dict[str, Any]] = field(default_factory=list)
    problem: str = ""
    """Why the run could not run at all (an unreadable notebook, no kernel)."""
    ended: bool = False


@dataclass(frozen=True)
class _Plan:
    """What to run: the notebook, the cells chosen, and whether that is every cell."""

    path: Path
    rel: str
    indices: list[int]
    code: list[int]
    whole: bool
    ids: list[str]
    """Every cell's id as the run started ("" for a cell without one)."""


def _plan(args: RunCellsArgs, ctx: ToolContext) -> _Plan:
    found = notebook_at(ctx, args.path)
    path, rel, notebook = found.path, found.rel, found.notebook
    count = len(notebook.cells)
    try:
        indices = parse_cells(args.cells, count)
    except BadSelection as error:
        raise ToolError(f"{error} ({rel} has {count} cells)") from None
    code = [i for i in indices if notebook.cells[i].cell_type == "code"]
    if not code:
        raise ToolError(f"no code cell to run in {rel} among the cells chosen")
    return _Plan(path, rel, indices, code, indices == list(range(count)),
                 [str(cell.get("id") or "") for cell in notebook.cells])


async def run_cells(args: RunCellsArgs, ctx: ToolContext) -> ToolResult:
    config = ctx.config
    plan = await asyncio.to_thread(_plan, args, ctx)
    ws = workspace_of(ctx)
    argv = (sys.executable, "-m", "mercury_nb.workspace.notebook_cells", str(plan.path),
            str(ws.root), str(config.file_read_max_bytes), repr(config.notebook_timeout_s),
            repr(config.notebook_total_timeout_s), json.dumps(plan.indices))
    try:
        launch = prepare(argv, config, ws.root)
    except SandboxUnavailable as error:
        raise ToolError(str(error)) from error
    run = _Run()
    total_hit = await _drive(launch.argv, launch.env, run, ctx, config.notebook_total_timeout_s)
    written, skipped = await asyncio.to_thread(write_back, ctx, plan.path, plan.rel,
                                               run.finished, plan.ids)
    return _result(ctx, plan, run, total_hit, written, skipped)


async def _drive(argv: tuple[str, ...], env: dict[str, str], run: _Run, ctx: ToolContext,
                 total_s: float) -> bool:
    """Run the child to its end, folding its lines into ``run``; True when it was killed at
    the total time limit. A cancel (Stop) kills it, kernel and all, and re-raises."""
    tracked = processes.register(ctx.process_scope)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + total_s + BACKSTOP_S
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, start_new_session=True,
            env=tracked.environment(env), limit=READ_LIMIT)
        tracked.attach(proc.pid)
        assert proc.stdout is not None
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError
            line = await asyncio.wait_for(proc.stdout.readline(), left)
            if not line:
                break
            _fold(run, line, ctx)
        await proc.wait()
    except TimeoutError:
        await processes.end_off_loop(tracked)
        return True
    except BaseException:
        processes.end_now(tracked)
        raise
    await processes.end_off_loop(tracked)  # a kernel the child left behind
    if not run.ended and not run.problem and (run.current is not None or not run.finished):
        run.problem = f"the run stopped without a result (exit code {proc.returncode})"
    return False


def _fold(run: _Run, line: bytes, ctx: ToolContext) -> None:
    try:
        event = json.loads(line)
    except ValueError:
        return
    if not isinstance(event, dict):
        return
    if "start" in event:
        run.current = int(event["start"])
        if ctx.progress is not None:
            ctx.progress(f"cell {event['at']}/{event['of']}")
    elif "cell" in event:
        run.finished.append(event["cell"])
        run.current = None
    elif "unreadable" in event or "broken" in event:
        run.problem = str(event.get("unreadable") or event.get("broken"))
    elif "end" in event:
        run.ended = True


def _result(ctx: ToolContext, plan: _Plan, run: _Run, total_hit: bool, written: bool,
            skipped: list[int]) -> ToolResult:
    config, rel, whole, code = ctx.config, plan.rel, plan.whole, plan.code
    chosen = None if whole else spans(plan.indices)
    failed = next((d for d in run.finished if d.get("failure")), None)
    error = blocker = ""  # for the model (cells by index) and for the user (counted from 1)
    if failed is not None:
        error = failure_words(int(failed["index"]), failed["failure"])
        blocker = failure_words(int(failed["index"]) + 1, failed["failure"])
    elif total_hit:
        at = run.current if run.current is not None else (code[len(run.finished)]
                                                           if len(run.finished) < len(code)
                                                           else code[-1])
        over = f"ran over the run's total time limit ({config.notebook_total_timeout_s:g} s)"
        error, blocker = f"cell {at}: {over}", f"cell {at + 1}: {over}"
    elif run.problem:
        error = blocker = f"the run could not finish: {run.problem}"
    which = "every cell" if whole else f"cells {chosen}"
    seconds = sum(float(d.get("seconds") or 0) for d in run.finished)
    lines = [f"Ran {which} of {rel} in a fresh kernel: {len(run.finished)} of {len(code)} code "
             f"cells ran ({seconds:.1f} s)."]
    for done in run.finished:
        lines.extend(_cell_lines(done, config.kernel_output_max_chars,
                                 known_secrets(config, os.environ)))
    if error:
        lines.append(f"Failed at {error}.")
        left = [i for i in code if i not in {int(d["index"]) for d in run.finished}]
        if left:
            lines.append(f"Not run: cells {spans(left)}.")
    else:
        lines.append("Every cell ran without error.")
    if written:
        lines.append(f"Outputs were written into {rel}.")
    if skipped:
        lines.append(f"Cells {spans(skipped)} changed while they ran: their outputs were not "
                     "written.")
    content = head_tail(redact("\n".join(lines), known_secrets(config, os.environ)),
                        result_budget(ctx))
    command = (f"run notebook {rel}" if whole  # the gate's words: cells counted from 1
               else f"run cells {spans([i + 1 for i in plan.indices])} of {rel}")
    exit_code = None if total_hit or (run.problem and not failed) else (1 if error else 0)
    return ToolResult(ok=not error, content=content, command=command, exit_code=exit_code,
                      timed_out=total_hit, changed_paths=(rel,) if written else (),
                      notebook_run=rel, cells_run="" if whole else (chosen or ""),
                      cell_error=blocker)


def _cell_lines(done: dict[str, Any], chars: int, secrets: tuple[str, ...]) -> list[str]:
    count = done.get("execution_count")
    head = f"--- cell {done['index']}" + (f" · [{count}]" if count is not None else "")
    failure = done.get("failure")
    lines = [head + (" · failed ---" if failure else " ---")]
    outputs = [o for o in done.get("outputs", []) if o.get("output_type") != "error"]
    if outputs:
        lines.append(outputs_text(outputs))
    if failure and failure.get("kind") == "error":
        trace = [o for o in done.get("outputs", []) if o.get("output_type") == "error"]
        if trace:
            lines.append("traceback:\n" + cut(_plain_traceback(trace[0]), chars, secrets))
    return lines


def _plain_traceback(output: dict[str, Any]) -> str:
    return strip_ansi("\n".join(str(line) for line in output.get("traceback") or ())).rstrip()


RUN_CELLS_TOOL: FunctionTool[RunCellsArgs] = FunctionTool(
    name="run_cells",
    description=(
        "Run a notebook's cells in a fresh kernel in its folder, stopping at the first "
        "failing cell. Returns each cell's outputs and the failing cell's error, and writes "
        "the outputs into the notebook. A clean run of every cell after your last change "
        "verifies the notebook."),
    brief="Run a notebook's cells in a fresh kernel.",
    args_model=RunCellsArgs,
    handler=run_cells,
    mutating=True,
)
