"""run_cells_in_kernel: a notebook's chosen cells, by id, run in the user's kernel in order.

Offered with the other kernel tools (a task from a ``%%mercury`` cell). Each code cell's source
is read from the notebook and runs like ``run_in_kernel`` code (a stoppable thread, the time
limit per cell, refused while another cell of the kernel runs); the first error ends the run.
The result names the cells that ran (ids and 1-based places) and the failing cell with its
error's last line: the gate's evidence for the cells the agent changed
(:mod:`mercury_nb.contract.gate.kernel_cells`).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from mercury_nb.contract.cell_spans import spans
from mercury_nb.contract.gate.kernel_cells import cells_text
from mercury_nb.contract.redaction import redact
from mercury_nb.contract.verification_run import is_agent_cell
from mercury_nb.tools.base import ToolContext, ToolError, ToolResult
from mercury_nb.tools.function_tool import FunctionTool
from mercury_nb.tools.kernel_access import kernel_secrets
from mercury_nb.tools.kernel_code import CodeRun, running_elsewhere
from mercury_nb.tools.kernel_tools import OTHER_CELL, STILL_RUNNING, run_within_limit
from mercury_nb.tools.notebooks import notebook_at
from mercury_nb.tools.value_summary import cut
from mercury_nb.tools.variables import NO_KERNEL


class RunCellsInKernelArgs(BaseModel):
    path: str = Field(description="Notebook path (.ipynb) relative to the workspace root.")
    cell_ids: list[str] = Field(
        description="Ids of the code cells to run, in notebook order (read_notebook and the "
        "results of edit/insert give them).")


def _last_line(run: CodeRun) -> str:
    lines = [line for line in run.traceback.strip().splitlines() if line.strip()]
    if lines:
        return lines[-1].strip()
    error = run.error
    return f"{type(error).__name__}: {error}" if error is not None else "error"


async def run_cells_in_kernel(args: RunCellsInKernelArgs, ctx: ToolContext) -> ToolResult:
    kernel = ctx.kernel
    if kernel is None:
        raise ToolError(NO_KERNEL)
    if kernel.other_cell_running():
        raise ToolError(OTHER_CELL.replace("run_in_kernel", "run_cells_in_kernel"))
    if running_elsewhere() is not None:
        raise ToolError(STILL_RUNNING)
    found = notebook_at(ctx, args.path)
    rel, notebook = found.rel, found.notebook
    wanted = set(args.cell_ids)
    places = {c.get("id"): n for n, c in enumerate(notebook.cells, 1) if c.get("id") in wanted}
    unknown = [cell_id for cell_id in args.cell_ids if cell_id not in places]
    if unknown:
        raise ToolError(f"no cell with id {unknown[0]!r} in {rel} (read_notebook shows the cells)")
    chosen = [(n, c) for n, c in enumerate(notebook.cells, 1)  # an agent cell starts a task:
              if c.get("id") in wanted and c.cell_type == "code"  # never from here
              and not is_agent_cell(c.source if isinstance(c.source, str) else "".join(c.source))]
    if not chosen:
        raise ToolError(f"none of the cells chosen in {rel} is a code cell that is not a "
                        "%%mercury cell")
    config = ctx.config
    ran_ids: list[str] = []
    numbers: list[int] = []  # counted from 1, as the banner and the pulse show them
    lines: list[str] = []
    failure = ""  # the failing cell's error, named by the model's index in the result
    interrupted = ""  # a cell of the user's started between two of these: the rest waits
    for total, (number, cell) in enumerate(chosen, 1):
        if total > 1 and kernel.other_cell_running():
            interrupted = (f" Cell {number - 1} and after did not run: a cell of yours started "
                           "running in this kernel, and these cells never interleave with it.")
            break
        if ctx.progress is not None:
            ctx.progress(f"cell {number} ({total}/{len(chosen)}) in your kernel")
        source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        run = CodeRun(kernel.python_of(source), kernel, config.kernel_output_max_chars,
                      scope=ctx.process_scope)
        finished, _ = await run_within_limit(run, ctx)  # False: stopped at the time limit
        ran_ids.append(str(cell.get("id")))
        numbers.append(number)
        secrets = kernel_secrets(config, kernel)  # as the cell left the namespace
        out = run.stdout.text(secrets).rstrip("\n")
        lines.append(f"--- cell {number - 1} (id {cell.get('id')}) ---"
                     + (f"\n{out}" if out else ""))
        if not finished:
            failure = (f"stopped at the time limit "
                       f"({config.kernel_code_timeout_s:g} s, kernel_code_timeout_s)")
        elif run.error is not None:
            failure = _last_line(run)
            lines.append(cut(run.traceback.rstrip("\n"), config.kernel_output_max_chars,
                             secrets))
        if failure:
            break
    ran = f"Ran {cells_text([n - 1 for n in numbers])} of {rel} in your kernel"
    head = (f"{ran}.{interrupted}" if not failure else
            f"{ran}; cell {numbers[-1] - 1}: {failure}. Cells after it did not run.")
    content = redact("\n".join([head, *lines]), kernel_secrets(config, kernel))
    return ToolResult(ok=not failure and not interrupted, content=content, ran_in_kernel=True,
                      kernel_run=rel,
                      kernel_cells=tuple(ran_ids), kernel_numbers=tuple(numbers),
                      cells_run=spans(numbers),
                      cell_error=f"cell {numbers[-1]}: {failure}" if failure else "")


RUN_CELLS_IN_KERNEL_TOOL: FunctionTool[RunCellsInKernelArgs] = FunctionTool(
    name="run_cells_in_kernel",
    description=(
        "Run a notebook's code cells, chosen by id, in the user's kernel, in notebook order "
        "(after you changed them: the cells you changed that then ran without error here are "
        "the evidence, without a fresh-kernel run). Stops at the first error and names it."),
    args_model=RunCellsInKernelArgs,
    handler=run_cells_in_kernel,
    mutating=True,
    brief="Run notebook cells by id in the user's kernel.",
)
