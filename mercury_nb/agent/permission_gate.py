"""The permission edge: before a tool call runs, the mode decides, and an Ask goes to the approver.

The decision is the pure :func:`~mercury_nb.contract.permissions.decide`. Here an
:class:`~mercury_nb.contract.permissions.Ask` is put to the front end's approver
(``ctx.permissions.approver``) within ``approval_timeout_s``; it fails closed: no approver,
a timeout or any error while asking is a denial, and such a denial (nobody said no, nobody
could say yes) marks the task to pause before its next request, naming the action and how to
allow it. The user's own "Deny" goes to the model, and the task goes on; the session notes
it (``user_denied``, :func:`~mercury_nb.contract.user_denials.denial_after`), so a
task that then cannot finish pauses naming it. Every ask and every answer is an event
(:class:`PermissionAsked`, :class:`PermissionAnswered`) and so a row of the ledger.
"""

from __future__ import annotations

import asyncio
import difflib
from pathlib import Path
from typing import Any, assert_never

from mercury_nb.agent.approval_events import PermissionAnswered, PermissionAsked
from mercury_nb.agent.events import EventSink
from mercury_nb.agent.session import TaskSession
from mercury_nb.contract.permissions import (
    APPROVAL_ANSWERS,
    Allow,
    ApprovalAnswer,
    ApprovalRequest,
    Ask,
    Deny,
    action_for_tool,
    decide,
    describe_action,
    pause_reason,
)
from mercury_nb.contract.permissions.approval import (
    ASK_FAILED,
    NO_APPROVER,
    TIMED_OUT,
    USER_DENIED,
)
from mercury_nb.contract.text_cut import clip
from mercury_nb.contract.untrusted import one_line, shown_lines
from mercury_nb.contract.user_denials import denial_after
from mercury_nb.tools.base import ToolContext, ToolError
from mercury_nb.tools.notebooks import cell_source, notebook_at
from mercury_nb.tools.registry import parse_arguments
from mercury_nb.workspace.errors import WorkspaceError
from mercury_nb.workspace.reading import read_bounded

DETAIL_CHARS = 4000
"""Characters of a diff or of code an ask shows (the rest is cut)."""


def call_arguments(raw_arguments: str) -> dict[str, Any]:
    """A call's arguments as a dict, read as the tool will read them (``parse_arguments``:
    an object encoded twice too); empty when the tool will refuse them."""
    args = parse_arguments("call", raw_arguments)
    return args if isinstance(args, dict) else {}


def call_detail(args: dict[str, Any], current: str | None = None) -> str:
    """What an ask shows of a call beyond its name: the diff of an edit (``current``: the
    text a whole-file write or a cell edit replaces, see :func:`replaced_text`), the code it
    runs, the path it touches (empty: nothing more)."""
    path = str(args.get("path", ""))
    cell = args.get("cell_id", args.get("index"))  # the cell an edit or a delete names
    if isinstance(cell, str | int) and not isinstance(cell, bool) and "cell_type" not in args:
        path = f"{path}, cell {'index ' if isinstance(cell, int) else ''}{cell}"
    old, new = args.get("old_text"), args.get("new_text")
    if current is not None:
        old, new = current, args.get("content", args.get("source"))
    if isinstance(old, str) and isinstance(new, str):
        diff = "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(),
                                              f"a/{path}", f"b/{path}", lineterm=""))
        return clip(diff or f"{path}\n(no change)", DETAIL_CHARS)
    for key in ("content", "source", "code"):
        if isinstance(args.get(key), str):
            head = f"{path}\n" if path else ""
            return clip(head + "\n".join(f"+{line}" for line in args[key].splitlines()),
                        DETAIL_CHARS)
    return path


def replaced_text(tool: str, args: dict[str, Any], ctx: ToolContext) -> str | None:
    """The text the call replaces, for its ask's diff: the file ``write_file`` overwrites, the
    source (on disk) of the cell ``edit_notebook_cell`` edits; None: none (a new file, an
    unreadable one, another tool)."""
    path, index = args.get("path"), args.get("index")
    try:
        if tool == "write_file" and isinstance(path, str):
            target = ctx.root.resolve(path)
            data = read_bounded(ctx.root.root, target, ctx.config.file_read_max_bytes)
            return data.decode("utf-8")
        if tool == "edit_notebook_cell" and isinstance(path, str) and type(index) is int:
            cells = notebook_at(ctx, path).notebook.cells
            return cell_source(cells[index]) if 0 <= index < len(cells) else None
    except (OSError, ValueError, ToolError, WorkspaceError):  # new, unreadable, not text
        return None
    return None


def _where(ctx: ToolContext, shown: str) -> str:
    """The workspace-relative path ``shown`` resolves to (a link ``g`` to ``.git`` is
    ``.git``), which the decision judges; ``shown`` itself when it does not resolve (the
    tool will refuse it)."""
    try:
        return ctx.root.rel(ctx.root.resolve(shown))
    except (WorkspaceError, OSError, ValueError):
        return shown


def _in_home(ctx: ToolContext, rel: str) -> bool:
    """Whether the workspace path ``rel`` lies in mercury's home (its ledger, undo's store)."""
    try:
        home = Path(ctx.config.home).expanduser().resolve()
        return (ctx.root.root / rel).resolve().is_relative_to(home)
    except (OSError, ValueError):
        return False


async def permission_for(tool: str, command: str | None, raw_arguments: str, ctx: ToolContext,
                         session: TaskSession, step: int, on_event: EventSink) -> str | None:
    """None: the call may run; else why it is denied (the model gets ``denied: <why>``)."""
    args = call_arguments(raw_arguments)
    path = args.get("path")
    where = _where(ctx, path) if isinstance(path, str) else ""
    action = action_for_tool(tool, command, where, where != "" and _in_home(ctx, where))
    rules = (*ctx.config.allow, *ctx.permissions.rules)
    decision = decide(ctx.config.permissions, rules, action)
    match decision:
        case Allow():
            return None
        case Deny(reason=reason):
            on_event(PermissionAnswered(step, tool, describe_action(action), "deny", why=reason))
            return reason
        case Ask(what=raw_what, suggested_rule=rule):
            ctx.permissions.asked += 1  # the one numbering: the approver and the live fold
            number = ctx.permissions.asked
            # shown as it is, controls escaped: nothing in it can hide the rest (\x1b[2K\r)
            what, shown_rule = one_line(raw_what), one_line(rule) if rule else rule
            shown = one_line(command) if command is not None else None
            detail = shown_lines(call_detail(
                args, await asyncio.to_thread(replaced_text, tool, args, ctx)))
            on_event(PermissionAsked(step, tool, what, shown, shown_rule, detail, number,
                                     ctx.permissions.asked_in))
            request = ApprovalRequest(tool, what, shown, detail, shown_rule, number)
            answer, why = await _asked(ctx, request)
            saved = rule if answer == "always-allow" else None  # the rule itself, unescaped
            on_event(PermissionAnswered(step, tool, what, answer,
                                        shown_rule if saved else None, why))
            session.user_denied = denial_after(session.user_denied, what, rule, answer,
                                               by_user=why == USER_DENIED)
            if answer == "deny":
                if why != USER_DENIED:  # nobody could allow it: the task pauses on it
                    session.permission_needed = pause_reason(what, rule)
                return why
            if saved is not None:
                ctx.permissions.rules.append(saved)
                if ctx.permissions.save_rule is not None:  # a ledger write: off the loop
                    await asyncio.to_thread(ctx.permissions.save_rule, saved)
            return None
        case _ as unreachable:
            assert_never(unreachable)


async def _asked(ctx: ToolContext, request: ApprovalRequest) -> tuple[ApprovalAnswer, str]:
    """The approver's answer and, for a denial, why (fails closed, see the module)."""
    approver = ctx.permissions.approver
    if approver is None:
        return "deny", NO_APPROVER
    timeout = ctx.config.approval_timeout_s
    try:
        answer = await asyncio.wait_for(approver(request, timeout), timeout)
    except TimeoutError:
        return "deny", TIMED_OUT.format(seconds=timeout)
    except Exception as error:  # any error while asking denies
        return "deny", ASK_FAILED.format(error=f"{type(error).__name__}: {error}")
    if answer not in APPROVAL_ANSWERS:
        return "deny", ASK_FAILED.format(error=f"an unknown answer {answer!r}")
    if answer == "always-allow" and request.suggested_rule is None:
        answer = "allow-once"  # no one rule allows it: allowed this time only
    return answer, USER_DENIED if answer == "deny" else ""
