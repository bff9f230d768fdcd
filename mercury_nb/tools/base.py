"""The tool seam: what a tool is, what it returns, and the context it runs in."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.subagent_supervisor import SubagentRun
from mercury_nb.contract.turns.final_reply import FinishCall
from mercury_nb.contract.unsaved_cells import UserCells
from mercury_nb.tools.approval import Permissions
from mercury_nb.workspace.confinement import Workspace

if TYPE_CHECKING:
    from mercury_nb.tools.kernel_access import KernelAccess

AskHandler = Callable[[str, list[str], str, float], Awaitable[str | None]]
"""``(question, options, recommended, timeout_s) -> chosen option`` (None: no answer in time).
The kernel installs one that shows a widget; without one, the run is headless."""


class SubagentRunner(Protocol):
    """Runs a delegated sub-task as a supervised sub-agent (the runs layer injects one)."""

    async def __call__(self, task: str, ctx: ToolContext) -> SubagentRun: ...


@dataclass(frozen=True)
class ToolResult:
    """What a tool did. ``content`` goes back to the model as the tool message."""

    ok: bool
    content: str
    changed_paths: tuple[str, ...] = ()
    """Workspace-relative paths this call created, modified or deleted."""
    command: str | None = None
    """For run_command: the command line that ran."""
    exit_code: int | None = None
    """For run_command: the process exit code (None when it was killed or never ran)."""
    timed_out: bool = False
    read_paths: tuple[str, ...] = ()
    """Workspace-relative paths whose content this call showed the model (read_file,
    read_notebook): what an answer may talk about as read."""
    finish: FinishCall | None = None
    """For finish: the model's typed end of the turn (the loop then asks nothing more)."""
    ran_in_kernel: bool = False
    """For run_in_kernel: code ran in the user's kernel (whatever it raised; False when the
    call was refused): the banner says "ran code in your kernel"."""
    notebook_run: str | None = None
    """For run_cells: the notebook whose cells ran in a fresh kernel (workspace-relative);
    the run is a notebook check for the gate (``command`` and ``exit_code`` say how it went)."""
    cells_run: str = ""
    """For run_cells: the cells that were chosen (``2–4, 7``) when not every cell; a run of
    some cells counts for the gate only when it fails."""
    cell_error: str = ""
    """For run_cells and run_cells_in_kernel: the failing cell, counted from 1 as the user
    sees cells (the banner, the change summary), and its error's last line (``cell 6:
    ZeroDivisionError: division by zero``), what the gate's blocker names; empty when every
    cell ran. The result's content names cells by index, as read_notebook does."""
    kernel_run: str | None = None
    """For run_cells_in_kernel: the notebook whose cells ran in the user's kernel."""
    kernel_cells: tuple[str, ...] = ()
    """For run_cells_in_kernel: the ids of the cells that ran (the failing one included)."""
    kernel_numbers: tuple[int, ...] = ()
    """For run_cells_in_kernel: those cells' 1-based places in the notebook."""
    changed_cells: tuple[str, ...] = ()
    """For the notebook cell tools: the ids of the cells this call wrote (its notebook is its
    one changed path); the gate asks that each of them ran after the last change."""


class LiveEdits(Protocol):
    """Where edit requests go and their answers come from (the ledger, shared with the server)."""

    def seen_at(self, path: Path) -> float | None: ...

    def submit(self, path: Path, request: dict[str, Any]) -> int: ...

    def answer(self, request_id: int) -> tuple[str, dict[str, Any]] | None: ...

    def withdraw(self, request_id: int, *, delivered_too: bool) -> bool: ...


@dataclass
class ToolContext:
    """What every tool call gets: the confined workspace root, the config, the callbacks the
    loop injects, and the little per-task state tools keep."""

    root: Workspace
    config: MercuryConfig
    notice: Callable[[str], None] | None = None
    """Shows a user-facing line (a Notice)."""
    ask_handler: AskHandler | None = None
    """Answers ask_user (None: headless)."""
    subagents: SubagentRunner | None = None
    """Runs delegate_task's sub-agents (None: no delegation here)."""
    on_output: Callable[[str], None] | None = None
    """Fed every piece of run_command's output (the stall watchdog)."""
    on_command: Callable[[bool, str], None] | None = None
    """Told when a command starts (True) and when it has finished, however it ended."""
    asked: str | None = None
    """ask_user's answer once it was asked (it is asked at most once per task)."""
    cell_hashes: dict[tuple[str, str], str] = field(default_factory=dict)
    """(notebook, cell id) -> the SHA-256 of the cell's source as the agent last read or wrote
    it: an edit or delete of a cell that changed since is refused (compare-and-swap), on disk
    and in the notebook open in JupyterLab (a live edit names it)."""
    process_scope: str | None = None
    """The task whose processes run_command's children belong to: whatever a command leaves
    running is killed when that task ends (:func:`mercury_nb.tools.processes.kill_scope`),
    or at process exit without a scope."""
    result_max_chars: int | None = None
    """The current model's budget for one tool result, set by the memory governor before a
    step's tools run (None: only the config's caps apply)."""
    kernel: KernelAccess | None = None
    """The user's kernel, for a task from a ``%%mercury`` cell (inspect_variables,
    run_in_kernel); None everywhere else."""
    step: int | None = None
    """The step of the running tool call (set by the loop around each call): what an
    agent-written cell's provenance names (``metadata.mercury``)."""
    permissions: Permissions = field(default_factory=Permissions)
    """Who approves what the permission mode asks about, and the rules allowed so far."""
    live_edits: LiveEdits | None = None
    """Where the notebook tools offer a change to a notebook open in JupyterLab (the ledger
    the runs layer chose for this task); None: they edit files on disk."""
    progress: Callable[[str], None] | None = None
    """Shows how far the running tool call is (``cell 7/12``) in the live status; set by
    the loop around each call, None outside one."""
    on_user_cells: Callable[[UserCells], None] | None = None
    """Told the cells of the user's unsaved work that a live edit's save wrote to a notebook
    (the task takes them as its "before"); set by the loop, None: not told."""
    before_write: Callable[[str], None] | None = None
    """Told the path (as the call names it) a mutating call is about to change, before it
    runs (its "before" is copied when the start snapshot lacks it); set by the loop."""


class Tool(Protocol):
    """A tool the model can call. ``schema`` is the OpenAI function-tool definition;
    ``compact_schema`` the same tool with a short description and no parameter docs."""

    name: str
    mutating: bool
    schema: dict[str, Any]
    compact_schema: dict[str, Any]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


class ToolError(Exception):
    """Raised by a tool for an expected failure; the message goes back to the model."""
