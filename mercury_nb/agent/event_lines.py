"""The shared words of the events' lines for people: tool verbs, verdicts, decisions, helpers.

Each event class (:mod:`mercury_nb.agent.events`) says its own line in its ``words``; what
several of them say alike lives here. The panel's twin is ``labextension/src/events.ts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Data = Mapping[str, Any]

TOOL_VERBS: dict[str, str] = {
    "run_command": "runs", "read_file": "reads", "write_file": "writes",
    "create_file": "creates", "edit_file": "edits", "delete_file": "deletes",
    "list_dir": "lists", "read_notebook": "reads the notebook",
    "edit_notebook_cell": "edits a cell of", "insert_notebook_cell": "adds a cell to",
    "run_cells": "runs the cells of",
    "delegate_task": "hands a sub-task to a sub-agent:", "ask_user": "asks you:",
}
"""What each tool does, as a verb; another tool reads as its name."""
VERDICT_WORDS = {"text-stop": "the model replied", "steps-exhausted": "the step budget ran out",
                 "interrupted": "the reply was cut off",
                 "truncated": "the reply hit its length limit", "aborted": "stopped"}
DECISION_WORDS = {"finish": "finishing", "next-turn": "going on", "retry-step": "asking again",
                  "guard-round": "one more round to check the work"}


def text_of(data: Data, key: str) -> str:
    """``data[key]`` when it is a string, else empty."""
    value = data.get(key)
    return value if isinstance(value, str) else ""


def chain_words(data: Data) -> str:
    """The model chain a task started or continued with (``a → b``)."""
    models = data.get("models")
    chain = " → ".join(str(m) for m in models) if isinstance(models, list) else ""
    return chain or text_of(data, "model") or "the model"


def tool_words(data: Data) -> str:
    """``runs pytest -q``, ``reads a.txt``: what a tool call does and on what, once."""
    name, summary = text_of(data, "name"), text_of(data, "summary")
    target = text_of(data, "command") or summary.removeprefix(f"{name}:").strip()
    return f"{TOOL_VERBS.get(name, name)} {'' if target == name else target}".strip()


class Words:
    """The default line of an event: its ``text``, or no line without one."""

    @staticmethod
    def words(data: Data) -> str | None:
        return text_of(data, "text") or None
