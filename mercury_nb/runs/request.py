"""What a front end asks for: a :class:`RunRequest` (its raw inputs) and, when refused, why.

A front end (the cell, the CLI, the panel's server, delegate_task, ``mercury_nb.run_task``)
builds one request from what it has and hands it to :meth:`~mercury_nb.runs.runner.Runner.
submit`; nothing it holds is a decision yet. :func:`~mercury_nb.runs.resolve.resolve` turns
it into settings and a planned run, or a typed :class:`~mercury_nb.runs.lookup.Refusal` that
each front end renders in its own words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mercury_nb.agent.events import EventSink
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.runs.lookup import Refusal, RefusalKind

if TYPE_CHECKING:
    from mercury_nb.agent.subagent import SubagentParent
    from mercury_nb.contract.permissions import AskedIn
    from mercury_nb.ledger.access import LedgerHandle
    from mercury_nb.tools.approval import Approver
    from mercury_nb.tools.ask_user import AskHandler
    from mercury_nb.tools.base import ToolContext
    from mercury_nb.tools.kernel_access import KernelAccess
    from mercury_nb.tools.registry import ToolRegistry
    from mercury_nb.transport.protocol import ChatModel

__all__ = ["Refusal", "RefusalKind", "RunRequest", "SubagentRequest"]


@dataclass(frozen=True)
class RunRequest:
    """One request to run: a new task (``task``) or a continue (``resume`` True, ``task_id``
    None for the workspace's latest paused task).

    ``flags`` are the front end's raw flags as given (unset ones None); ``traitlets`` the
    ``c.Mercury.*`` values; ``env`` the environment (None: ``os.environ``). ``config``, when
    given, is a settings object a caller already holds (the library call, a sub-agent): it
    replaces the traitlets and environment layers. ``recorded`` False runs the task here
    unrecorded (the library call): no ledger, nothing refused for the workspace.
    ``refuse_missing_key``: a new task whose model lacks its API key is refused before it
    starts (the cell, the CLI, the panel) instead of ending through the loop with the same
    banner (the library call, a sub-agent)."""

    task: str = ""
    resume: bool = False
    task_id: str | None = None
    words: str | None = None
    flags: Mapping[str, Any] = field(default_factory=dict)
    traitlets: Mapping[str, Any] = field(default_factory=dict)
    env: Mapping[str, str] | None = None
    config: MercuryConfig | None = None
    sink: EventSink | None = None
    ask: AskHandler | None = None
    registry: ToolRegistry | None = None
    model: ChatModel | None = None
    recorded: bool = True
    refuse_missing_key: bool = False
    report: Callable[[str], None] | None = None
    """Where the ledger's startup notices go (default: stderr)."""
    flags_over_config: bool = True
    """Whether ``flags`` also apply to the current settings (False: a continue's flags only
    lay over its checkpoint's, as the panel's continue sends them)."""
    view_for: Callable[[MercuryConfig], tuple[EventSink, AskHandler | None]] | None = None
    """A front end that shows the run from its settings (a cell's widget): called once the
    request resolved, it gives the sink and ask handler (replacing ``sink`` and ``ask``)."""
    prune_ledger: bool = False
    """The ledger's startup pass also prunes finished tasks past the configured limits (the
    CLI's pass)."""
    handle: LedgerHandle | None = None
    """A ledger the front end already opened with its startup pass (else opened here)."""
    within: Path | None = None
    """A folder every workspace the request runs in must lie inside (the panel's server
    root), for a new task and for a continue alike (``outside-root``)."""
    approver: Approver | None = None
    """Asks the user about what the permission mode does not allow unasked (the CLI on a
    terminal, the cell's buttons); None: nobody can be asked, so such an action is denied
    and the task pauses on it."""
    approver_in: AskedIn | None = None
    """Where ``approver`` asks (the panel, the cell, the terminal): a question's event says
    so, and a view elsewhere shows where to answer it instead of buttons that cannot."""
    kernel: KernelAccess | None = None
    """The user's kernel, from a front end that runs in one (a ``%%mercury`` cell): the task
    gets inspect_variables and run_in_kernel, and its ``@name`` variables attached."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "task", self.task.strip())  # the one strip of the text


@dataclass(frozen=True)
class SubagentRequest:
    """delegate_task's request: run ``task`` as sub-agent ``sub_id`` of ``parent`` with the
    parent's tool context (its settings, workspace and ask handler); ``sink`` gets its own
    events (the parent's share is forwarded from there); ``handle``: the parent's ledger
    (None: unrecorded)."""

    task: str
    sub_id: str
    parent: SubagentParent
    ctx: ToolContext
    sink: EventSink
    handle: LedgerHandle | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "task", self.task.strip())  # the one strip of the text
