"""The running state of one task: messages, counters and the tool log the contract judges."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Any

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.redaction import known_secrets
from mercury_nb.contract.user_denials import UserDenial
from mercury_nb.contract.vocabulary import NON_INVESTIGATING_TOOLS
from mercury_nb.workspace.before_copies import BeforeCopies


@dataclass(frozen=True)
class ToolLogEntry:
    """One executed tool call, in order. ``seq`` orders every call of the task."""

    seq: int
    step: int
    name: str
    ok: bool
    mutating: bool
    summary: str
    result_head: str
    command: str | None = None
    exit_code: int | None = None
    timed_out: bool = False
    changed_paths: tuple[str, ...] = ()
    read_paths: tuple[str, ...] = ()
    ran_in_kernel: bool = False
    notebook_run: str | None = None
    """For run_cells (and the end-of-task check): the notebook that ran in a fresh kernel."""
    cells_run: str = ""
    """For run_cells: the cells chosen when not every cell (``2–4``)."""
    cell_error: str = ""
    """The failing cell of a notebook run and its error's last line."""
    kernel_run: str | None = None
    """For run_cells_in_kernel: the notebook whose cells ran in the user's kernel."""
    kernel_cells: tuple[str, ...] = ()
    """For run_cells_in_kernel: the ids of the cells that ran."""
    kernel_numbers: tuple[int, ...] = ()
    """For run_cells_in_kernel: those cells' 1-based places in the notebook."""
    changed_cells: tuple[str, ...] = ()
    """For the notebook cell tools: the ids of the cells the call wrote."""

    @property
    def notebook_ran(self) -> bool:
        """A run of a notebook's cells in a fresh kernel (run_cells, the end-of-task check)."""
        return self.name == "notebook_check" or (
            self.notebook_run is not None and self.command is not None)


@dataclass(frozen=True)
class ReadBackEntry:
    """One changed file read back from disk at a text-stop: ``ok`` when its state on disk
    is what the change summary says (a created or modified file reads; a deleted one is gone)."""

    path: str
    ok: bool
    step: int


@dataclass
class TaskSession:
    """Mutable task state owned by the loop (and checkpointed by the ledger later)."""

    task_id: str
    task: str
    config: MercuryConfig
    messages: list[dict[str, Any]] = field(default_factory=list)
    tool_log: list[ToolLogEntry] = field(default_factory=list)
    steps_total: int = 0
    steps_in_budget: int = 0
    seq: int = 0
    """The order number of the latest tool call (``ToolLogEntry.seq``): what ran after what."""
    provider_index: int = 0
    models_used: list[str] = field(default_factory=list)
    answer: str | None = None
    """The model's final reply, set only from a complete text-stop stream."""
    last_verdict: str | None = None
    usage: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Model name -> (prompt, completion) tokens its provider reported, summed over every
    run of the task (a checkpoint keeps them) and, for a parent, its sub-agents' too."""
    logged: list[dict[str, Any]] = field(default_factory=list, repr=False, compare=False)
    """The tool log's entries as checkpoint data, each made once (the log only grows)."""
    config_data: tuple[MercuryConfig, dict[str, Any]] | None = field(
        default=None, repr=False, compare=False)
    """:attr:`config` as checkpoint data, made once per config object (it is frozen)."""
    usage_to: TaskSession | None = field(default=None, repr=False)
    """A sub-agent's parent session: every token it uses counts there as well."""
    permission_needed: str | None = None
    """Set when an action was denied because nobody could be asked (or no answer came): the
    task pauses on it before its next request (never checkpointed: a continue asks anew)."""
    user_denied: UserDenial | None = None
    """The action the user last denied in this run (and did not allow later), its
    sub-agents' included: if the task then cannot finish, its pause names it (never
    checkpointed: a continue asks anew)."""
    before_copies: BeforeCopies = field(default_factory=BeforeCopies)
    """The "before" bytes this run's tools copied at their first write of a file the start
    snapshot could not keep (its end records them for undo, then they are not needed)."""
    shown_task: str | None = None
    """The task's text as shown and stored (displayable, masked), made once by the door;
    None: the outcome masks :attr:`task` itself."""
    grounded_paths: tuple[str, ...] = ()
    """Workspace-relative files the agent itself read into the conversation (answer grounding)."""

    @property
    def read_paths(self) -> frozenset[str]:
        """Every file whose content the task showed the model: grounded, or read by a tool."""
        tools = (p for e in self.tool_log if e.ok for p in e.read_paths)
        return frozenset((*self.grounded_paths, *tools))

    read_backs: tuple[ReadBackEntry, ...] = ()
    """The latest read-back of the changed files (measured at the latest text-stop)."""

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every secret the task knows: its key and the env's secret values."""
        return known_secrets(self.config, os.environ)

    def add_usage(self, model: str, prompt_tokens: int, completion_tokens: int) -> None:
        prompt, completion = self.usage.get(model, (0, 0))
        self.usage[model] = (prompt + prompt_tokens, completion + completion_tokens)
        if self.usage_to is not None:
            self.usage_to.add_usage(model, prompt_tokens, completion_tokens)

    @property
    def task_usage(self) -> dict[str, tuple[int, int]]:
        """What the whole task used (a sub-agent's parent's, its own included): what its
        budgets count."""
        return self.usage_to.task_usage if self.usage_to is not None else self.usage

    @classmethod
    def start(cls, task: str, config: MercuryConfig, task_id: str | None = None) -> TaskSession:
        return cls(
            task_id=task_id or uuid.uuid4().hex[:12],
            task=task,
            config=config,
        )

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def log(self, entry: ToolLogEntry) -> None:
        self.tool_log.append(entry)

    @property
    def last_mutation_seq(self) -> int | None:
        """The seq of the last call that may have changed the workspace: a successful file
        tool, or any command that is neither a check nor read-only (a failing script may
        still have written files, so evidence must come after it)."""
        return self._last_mutation(kernel_runs=True)

    @property
    def last_change_seq(self) -> int | None:
        """:attr:`last_mutation_seq` without the runs of code in the user's kernel: what
        cells ran there after it count together as the notebook's evidence (a run there
        changes the kernel, not the cells it ran)."""
        return self._last_mutation(kernel_runs=False)

    def _last_mutation(self, *, kernel_runs: bool) -> int | None:
        for entry in reversed(self.tool_log):
            if (entry.mutating and (kernel_runs or not entry.ran_in_kernel)
                    and (entry.ok or entry.command is not None)):
                return entry.seq
        return None

    def successful_mutations_since(self, seq: int) -> int:
        """How many successful mutating calls happened after ``seq`` (for the guard)."""
        return sum(1 for e in self.tool_log if e.seq > seq and e.ok and e.mutating)

    @property
    def investigations(self) -> int:
        """Non-mutating calls that looked at the workspace and ran (a read, a listing, a
        read-only command whatever its exit code); see ``NON_INVESTIGATING_TOOLS``."""
        return sum(1 for e in self.tool_log
                   if not e.mutating and e.name not in NON_INVESTIGATING_TOOLS
                   and (e.ok or e.exit_code is not None))

    @property
    def last_failed_mutation(self) -> ToolLogEntry | None:
        for entry in reversed(self.tool_log):
            if entry.mutating and not entry.ok:
                return entry
        return None

