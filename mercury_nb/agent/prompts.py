"""The system prompt (AUTO mode) and the message builders the loop sends to the model."""

from __future__ import annotations

import json
from typing import Any

from mercury_nb.contract.text_cut import clip
from mercury_nb.contract.turns.stream_assembly import StepReply
from mercury_nb.contract.untrusted import one_line

AUTO_MODE_PROMPT = """\
You are Mercury, a coding agent working inside a Jupyter workspace at {root}.
You act through tools; every path is relative to the workspace root.

How you work (AUTO mode):
- Read first: look at the relevant files before changing anything.
- Plan silently, then implement at once. Do not narrate what you are about to do — do it.
- Small and medium changes: build them without asking. For a large or consequential change
  you may call ask_user once with a short plan and a recommended option, then build without
  asking again.
- Write large files in sections: create_file with about the first 80 lines, then edit_file
  with an empty old_text to append about 80 lines at a time.
- Verify before you finish: after your last change, run the project's tests or build
  (for example `python -m pytest -q`) and make sure it exits 0. Nothing is done without
  a passing check that ran after the last change.
- End with the finish tool: status done with a short summary once the work is verified;
  blocked with the blocker if you cannot go on; question if you need the user's answer.
"""

CHAT_MODE_PROMPT = """\
You are Mercury, an assistant working inside a Jupyter workspace at {root}.
Answer the user's question. You may read files with the tools to ground your answer;
change files only if the user asks you to.
"""


def system_message(root: str, mode: str) -> dict[str, Any]:
    template = CHAT_MODE_PROMPT if mode == "chat" else AUTO_MODE_PROMPT
    return {"role": "system", "content": template.format(root=root)}


def user_message(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant_message(reply: StepReply, *, with_tool_calls: bool = True) -> dict[str, Any]:
    """The assistant message to append for a step; tool calls only from a complete stream."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if with_tool_calls and reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments or "{}"},
            }
            for call in reply.tool_calls
        ]
    if message["content"] is None and "tool_calls" not in message:
        message["content"] = ""
    return message


def tool_message(call_id: str, name: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def summarize_arguments(name: str, raw_arguments: str, limit: int = 80) -> str:
    """A short, human line for a tool call, e.g. ``run_command: pytest -q``."""
    try:
        args = json.loads(raw_arguments or "{}")
    except (ValueError, TypeError, RecursionError):
        return name
    if not isinstance(args, dict):
        return name
    key = next((k for k in ("command", "path", "question", "task", "status") if k in args),
               None)
    if key is None:
        return name
    value = one_line(str(args[key]))
    value = clip(value, limit)  # redacted before the cut
    return f"{name}: {value}"
