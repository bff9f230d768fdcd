"""The permission decision: a mode, the allow rules and one action in; Allow, Ask or Deny out.

Modes (``--permissions``, ``MERCURY_PERMISSIONS``, ``c.Mercury.permissions``):

* ``read-only``: reads only; anything that writes or runs is denied;
* ``ask``: every write and every command asks (a command every part of which matches an
  allow rule, the built-in read-only ones included, runs without asking);
* ``edits`` (the default): file and notebook edits inside the workspace run, except in a
  ``.git`` folder (git runs what its config there names) and in mercury's own home when it
  lies in the workspace (its ledger, undo's store), which ask; commands ask
  unless the allow rules match them; ``run_in_kernel``, notebook runs and tools from outside
  the package ask unless a ``tool:NAME`` rule matches them (``--allow tool:run_cells``);
* ``auto``: everything runs unasked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, assert_never, get_args

from mercury_nb.contract.permissions.rules import (
    exact_rule,
    matches_rules,
    matches_tool_rules,
    tool_rule,
)

PermissionMode = Literal["read-only", "ask", "edits", "auto"]
PERMISSION_MODES: tuple[PermissionMode, ...] = get_args(PermissionMode)
DEFAULT_MODE: PermissionMode = "edits"

ActionKind = Literal["read", "workspace-edit", "notebook-edit", "command", "run-in-kernel",
                     "outside-tool"]
"""What a tool call does: reads, edits a workspace file or a notebook, runs a command, runs
code in a kernel (``run_in_kernel``, ``run_cells``, ``run_cells_in_kernel``), or is a tool
from outside the package."""
ACTION_KINDS: tuple[ActionKind, ...] = get_args(ActionKind)

_READ_TOOLS = frozenset({"list_dir", "read_file", "read_notebook", "inspect_variables",
                         "ask_user", "finish", "delegate_task"})
"""Tools that change nothing themselves (a sub-agent's own calls are decided one by one)."""
_TOOL_KINDS: dict[str, ActionKind] = {
    "create_file": "workspace-edit", "write_file": "workspace-edit",
    "edit_file": "workspace-edit", "delete_file": "workspace-edit",
    "edit_notebook_cell": "notebook-edit", "insert_notebook_cell": "notebook-edit",
    "delete_notebook_cell": "notebook-edit",
    "run_command": "command", "run_in_kernel": "run-in-kernel", "run_cells": "run-in-kernel",
    "run_cells_in_kernel": "run-in-kernel",
}
"""The kind of each built-in tool that changes or runs something (a test checks that every
built-in tool is here or in ``_READ_TOOLS``)."""


_RULED_TOOLS: frozenset[ActionKind] = frozenset({"run-in-kernel", "outside-tool"})
"""The kinds whose ask offers a ``tool:NAME`` rule for "Always allow" (an edit asks only in
``ask`` mode, where the user chose to see each one)."""


@dataclass(frozen=True)
class Action:
    """One tool call as the decision sees it: its kind, the tool, the command line (a
    command's) and what to show when asking (a path, a diff, the code)."""

    kind: ActionKind
    tool: str
    command: str | None = None
    detail: str = ""
    own_store: bool = False
    """The path lies in mercury's own home (``MERCURY_HOME`` inside the workspace): its
    ledger and undo's store, which an ``edits`` task may not change unasked."""


@dataclass(frozen=True)
class Allow:
    """Run it without asking."""


@dataclass(frozen=True)
class Ask:
    """Ask the user first: ``what`` the action is in words; ``suggested_rule``: the allow
    rule "Always allow" would save (None: no one rule allows it, such as a chain)."""

    what: str
    suggested_rule: str | None = None


@dataclass(frozen=True)
class Deny:
    """Do not run it; ``reason`` goes to the model after ``denied: ``."""

    reason: str


Decision = Allow | Ask | Deny


def action_for_tool(tool: str, command: str | None = None, detail: str = "",
                    own_store: bool = False) -> Action:
    """The action of a call of ``tool`` (an unknown name is a tool from outside the package);
    ``own_store``: its path is in mercury's own home."""
    if tool in _READ_TOOLS:
        return Action("read", tool, detail=detail)
    return Action(_TOOL_KINDS.get(tool, "outside-tool"), tool, command, detail, own_store)


def describe_action(action: Action) -> str:
    """What ``action`` does, in words (what an ask shows and a denial names)."""
    match action.kind:
        case "command":
            return f'run "{action.command or ""}"'
        case "workspace-edit" | "notebook-edit":
            return f"{action.tool} {action.detail}".strip()
        case "run-in-kernel":
            return f"{action.tool} (run code in a kernel)"
        case "outside-tool":
            return f"use the tool {action.tool}"
        case "read":
            return f"{action.tool} (read)"
        case _ as unreachable:
            assert_never(unreachable)


def decide(mode: PermissionMode, rules: Iterable[str], action: Action) -> Decision:
    """Whether ``action`` runs in ``mode`` with the allow ``rules`` (see the module)."""
    if action.kind == "read":
        return Allow()
    what = describe_action(action)
    match mode:
        case "auto":
            return Allow()
        case "read-only":
            return Deny(f"the task runs in read-only mode: it may not {what}")
        case "ask" | "edits":
            if action.kind == "command":
                command = action.command or ""
                if matches_rules(command, rules):
                    return Allow()
                return Ask(what, exact_rule(command))
            if (mode == "edits" and action.kind in ("workspace-edit", "notebook-edit")
                    and not in_git_dir(action.detail) and not action.own_store):
                return Allow()
            if matches_tool_rules(action.tool, rules):  # the user's tool:NAME rule
                return Allow()
            rule = tool_rule(action.tool) if action.kind in _RULED_TOOLS else None
            return Ask(what, rule)
        case _ as unreachable:
            assert_never(unreachable)


def in_git_dir(path: str) -> bool:
    """Whether ``path`` is in a ``.git`` folder (or is one): git runs the programs its config
    there names (``core.fsmonitor`` on ``git status``), so an ``edits`` task asks first."""
    return any(part.lower() == ".git" for part in path.replace("\\", "/").split("/"))


def offers_mutating_tools(mode: PermissionMode) -> bool:
    """Whether a task in ``mode`` is offered tools that write or run (not in ``read-only``),
    and so whether its guard may force a mutating step."""
    return mode != "read-only"
