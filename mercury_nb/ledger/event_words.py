"""The one table of a recorded event's words for people: each kind of the log as a plain line.

``%mercury show`` and the CLI's ``show`` print these lines; the panel's twin is
``labextension/src/events.ts`` (a test runs both on the same events). A line says what
happened in plain words, once: no event kind, no verdict or decision names, no tool name
followed by the same summary again. ``None``: not a line of the log for people (the streamed
text, which the live views show; a tool that finished fine, which its start already said).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, assert_never, get_args

from mercury_nb.agent.events import AGENT_EVENT_KINDS
from mercury_nb.contract.untrusted import one_line
from mercury_nb.ledger.records import LedgerKind, RecordedKind

TOOL_VERBS: dict[str, str] = {
    "run_command": "runs",
    "read_file": "reads",
    "write_file": "writes",
    "create_file": "creates",
    "edit_file": "edits",
    "delete_file": "deletes",
    "list_dir": "lists",
    "read_notebook": "reads the notebook",
    "edit_notebook_cell": "edits a cell of",
    "insert_notebook_cell": "adds a cell to",
    "run_cells": "runs the cells of",
    "delegate_task": "hands a sub-task to a sub-agent:",
    "ask_user": "asks you:",
}
"""What each tool does, as a verb; another tool reads as its name."""

VERDICT_WORDS: dict[str, str] = {
    "text-stop": "the model replied",
    "steps-exhausted": "the step budget ran out",
    "interrupted": "the reply was cut off",
    "truncated": "the reply hit its length limit",
    "aborted": "stopped",
}
DECISION_WORDS: dict[str, str] = {
    "finish": "finishing",
    "next-turn": "going on",
    "retry-step": "asking again",
    "guard-round": "one more round to check the work",
}

KINDS: frozenset[str] = frozenset(AGENT_EVENT_KINDS) | frozenset(get_args(LedgerKind))


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def tool_words(data: Mapping[str, Any]) -> str:
    """``runs pytest -q``, ``reads a.txt``: what a tool call does and on what, once."""
    name, summary = _text(data, "name"), _text(data, "summary")
    target = _text(data, "command") or summary.removeprefix(f"{name}:").strip()
    if target == name:
        target = ""
    verb = TOOL_VERBS.get(name, name)
    return f"{verb} {target}".strip()


def _turn(data: Mapping[str, Any]) -> str:
    verdict, decision = _text(data, "verdict"), _text(data, "decision")
    parts = [VERDICT_WORDS.get(verdict, verdict), DECISION_WORDS.get(decision, decision)]
    return ", ".join(part for part in parts if part) or "a turn ended"


def _pause(data: Mapping[str, Any]) -> str:
    tokens = f" · {data.get('prompt_tokens')}/{data.get('budget_tokens')} tokens" \
        if isinstance(data.get("prompt_tokens"), int) else ""
    rss = data.get("rss_mb")
    memory = f" · {round(rss)}/{data.get('limit_mb')} MB" if isinstance(rss, int | float) else ""
    return f"paused on {_text(data, 'reason')}{tokens}{memory}: {_text(data, 'why')}"


def words_for(kind: RecordedKind, data: Mapping[str, Any]) -> str | None:
    """The line for one event of ``kind`` with its recorded ``data`` (see the module)."""
    match kind:
        case "task-started" | "resume":
            models = data.get("models")
            chain = " → ".join(str(m) for m in models) if isinstance(models, list) else ""
            how = "started" if kind == "task-started" else "continued"
            return f"{how} with {chain or _text(data, 'model') or 'the model'}"
        case "step-started":
            return f"step {data.get('step', '?')}"
        case "text-delta" | "step-ended":
            return None
        case "tool-started":
            return tool_words(data)
        case "tool-finished":
            return None if data.get("ok", True) else f"failed: {tool_words(data)}"
        case "tool-progress":
            return None  # live only: the status line shows it
        case "pulse":
            return _text(data, "text") or "waiting for the model"
        case "memory-pressure-pause":
            return _pause(data)
        case "turn-ended":
            return _turn(data)
        case "task-finished":
            return f"ended: {_text(data, 'status') or 'finished'}"
        case "stop-requested":
            return "Stop requested"
        case "recovery":
            return _text(data, "text") or "its process had ended: paused"
        case ("notice" | "provider-switch" | "guard-round" | "continuation" | "verification"
              | "compaction" | "stall" | "subagent"):
            return _text(data, "text") or None
        case _ as unreachable:
            assert_never(unreachable)


def event_words(kind: str, data: Mapping[str, Any]) -> str | None:
    """:func:`words_for` a stored kind (one this version does not know reads as a notice),
    on one line."""
    known: RecordedKind = kind if kind in KINDS else "notice"  # type: ignore[assignment]
    line = words_for(known, data)
    return None if line is None else one_line(line)
