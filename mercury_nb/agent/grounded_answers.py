"""Grounded answers' I/O: named files read before the first request, unread ones named after.

The decisions are in :mod:`mercury_nb.contract.answer_grounding`.
"""

from __future__ import annotations

import asyncio
import os
import stat
from dataclasses import replace
from typing import Any

from mercury_nb.agent.prompts import user_message
from mercury_nb.agent.session import TaskSession
from mercury_nb.contract.answer_grounding import (
    GroundingPlan,
    Mention,
    PathFacts,
    format_answer_grounding,
    named_paths,
    plan_grounding,
    unread_files,
)
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import Ending, NoChangesCompletion
from mercury_nb.contract.gate.task_intent import TaskIntent
from mercury_nb.contract.recovery.context_budget import output_cap, tool_result_chars
from mercury_nb.contract.redaction import displayable, known_secrets, redact
from mercury_nb.tools.base import ToolError
from mercury_nb.tools.file_reading import read_page
from mercury_nb.transport.context_window import context_window_of
from mercury_nb.transport.protocol import ChatModel
from mercury_nb.workspace.confinement import Workspace
from mercury_nb.workspace.errors import WorkspaceError


def observe_path(ws: Workspace, written: str) -> PathFacts:
    """What one named path is, through the workspace's confinement: outside (an escape, a
    symlink leaving the root), missing, not a regular file, or a file and its size."""
    try:
        path = ws.resolve(written)
    except WorkspaceError:
        return PathFacts(written, None, "outside")
    relative = ws.rel(path)
    try:
        info = os.stat(path)
    except OSError:
        return PathFacts(written, relative, "missing")
    if not stat.S_ISREG(info.st_mode):
        return PathFacts(written, relative, "not_regular")
    return PathFacts(written, relative, "file", info.st_size)


def _read(ws: Workspace, relative: str, chars: int, scan_bytes: int) -> str | None:
    """The file's first ``chars`` characters as read_file would show them (regular files only,
    opened through the workspace's directory fds); None when it cannot be read as text."""
    try:
        page = read_page(ws.root, ws.root / relative, relative, offset=1, limit=None,
                         budget=chars, scan_bytes=scan_bytes)
    except (ToolError, OSError, WorkspaceError):
        return None
    return page.content()


def _ground(ws: Workspace, task: str, budget: int,
            config: MercuryConfig) -> tuple[str, tuple[str, ...]] | None:
    """The grounding text and the files it holds (None: nothing to say)."""
    facts = [observe_path(ws, name) for name in named_paths(task)]
    plan: GroundingPlan = plan_grounding(facts, budget, config)
    if plan.empty:
        return None
    secrets = known_secrets(config, os.environ)
    pages: list[tuple[str, str]] = []
    for read in plan.reads:
        text = _read(ws, read.relative, read.chars, config.read_file_max_scan_bytes)
        if text is not None:
            pages.append((read.relative, redact(displayable(text), secrets)))
    if not pages and not plan.skipped:
        return None
    text = format_answer_grounding(str(ws.root), pages, plan.skipped)
    return text, tuple(path for path, _ in pages)


async def answer_grounding(session: TaskSession, ws: Workspace, model: ChatModel,
                           intent: TaskIntent) -> dict[str, Any] | None:
    """The grounding message for a question that names workspace files (None: not a question,
    nothing named, or nothing readable). The files share one tool result's budget in the
    model's window (``tool_result_window_fraction``; ``read_file_max_chars`` when the window
    is unknown); what was read is kept in ``session.grounded_paths``. ``intent``: the task's,
    as its router state read it when it started."""
    config = session.config
    if config.answer_grounding_files == 0:
        return None
    if intent is not TaskIntent.QUESTION:
        return None
    if not named_paths(session.task):
        return None
    window = await context_window_of(model, config)
    reserve = output_cap(window, config.max_output_tokens, config)
    budget = tool_result_chars(window, reserve, config) or config.read_file_max_chars
    grounded = await asyncio.to_thread(_ground, ws, session.task, budget, config)
    if grounded is None:
        return None
    text, paths = grounded
    session.grounded_paths = (*session.grounded_paths, *paths)
    return user_message(text)


def _mentions(ws: Workspace, answer: str) -> list[Mention]:
    found = (observe_path(ws, name) for name in named_paths(answer))
    return [Mention(f.written, f.relative) for f in found
            if f.kind == "file" and f.relative is not None]


async def mark_unread(ending: Ending, session: TaskSession, ws: Workspace) -> Ending:
    """A no-changes answer that talks about workspace files the task never read carries
    their names (the banner's "answered without reading …"); every other ending is as given."""
    if not isinstance(ending, NoChangesCompletion) or not session.answer:
        return ending
    mentions = await asyncio.to_thread(_mentions, ws, session.answer)
    unread = unread_files(mentions, session.read_paths)
    return replace(ending, unread=unread) if unread else ending
