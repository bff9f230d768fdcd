"""Compaction of the OpenAI-format message list: head+tail in place, then a model-written summary.

Two stages, both pure (the loop sends the summary request and applies the answer):

1. ``compact_messages``: every message older than the newest ``config.compaction_keep_recent``
   whose text is over ``config.compaction_min_chars`` becomes a ``compaction_head_chars`` head
   and a ``compaction_tail_chars`` tail around ``COMPACTION_MARKER``. The system message(s) and
   the first user message (the task) are never touched; no message is dropped, reordered or
   re-roled, and ``tool_calls`` / ``tool_call_id`` are kept, so tool-call pairing holds.
   Tool-call arguments are never cut (they must stay valid JSON). Already compacted texts
   are left alone, so the stage is idempotent.
2. ``plan_summary`` / ``apply_summary``: when stage 1 is not enough, the turns between the
   task and the kept recent messages are replaced by one summary message written by the
   model from ``SummaryPlan.request``. The kept tail never starts with a tool result, so
   every assistant tool call keeps its results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.text_cut import CUT_REACH, cut_edges, keep_head_and_tail

Message = dict[str, Any]

COMPACTION_MARKER = "[…compacted: {chars} chars → head+tail. Re-read specific sections if needed.]"
"""Put between the kept head and tail; ``{chars}`` is the original length."""

_MARKER_PREFIX = "[…compacted: "
_MARKER_ROOM = len(COMPACTION_MARKER) + 24
"""Upper bound on marker plus separators, whatever the number of digits."""

SUMMARY_INSTRUCTIONS = """\
You are compacting the working memory of a coding agent that is in the middle of a task.
Summarize the earlier part of its conversation (given below) so the agent can continue
without it. Keep, under these headings:

Task: the user's task, restated faithfully (quote it if short).
Plan: the plan, and which steps are done and which remain.
Files touched: every file created, edited or deleted, one line each on what changed.
Last errors: the most recent failing commands, tests or tool errors, quoted exactly and briefly,
and whether they were fixed.
Facts: decisions and facts later steps depend on (working commands, paths, APIs, settings).

Be factual. Do not claim progress the conversation does not show. Do not address the user.
Output only the summary, at most 600 words."""
"""The system prompt of the summary request."""

SUMMARY_HEADER = (
    "[SYSTEM: CONTEXT SUMMARY — written by the model from {count} earlier messages, "
    "which it replaces to save context. Re-read files if you need their exact content.]"
)
"""First line of the message that replaces the summarized turns."""

_SYSTEM_ROLES = ("system", "developer")

_TRANSCRIPT_CLIP = 1500
"""Characters kept from each end of one message in the summary transcript."""


@dataclass(frozen=True)
class CompactionResult:
    """The compacted list (to send from now on) and what the compaction saved."""

    messages: tuple[Message, ...]
    compacted: int
    chars_before: int
    chars_after: int


@dataclass(frozen=True)
class SummaryPlan:
    """Replace ``messages[start:end]`` by a summary the model writes from ``request``."""

    start: int
    end: int
    request: tuple[Message, ...]

    @property
    def replaced(self) -> int:
        return self.end - self.start


def compaction_marker(chars: int) -> str:
    return COMPACTION_MARKER.format(chars=chars)


def message_chars(message: Mapping[str, Any]) -> int:
    """Characters a message carries: its text (or text parts) and its tool-call arguments."""
    total = 0
    content = message.get("content")
    if isinstance(content, str):
        total += len(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                total += len(part["text"])
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            total += len(str(function.get("name") or "")) + len(
                str(function.get("arguments") or "")
            )
    return total


def protected_prefix_end(messages: Sequence[Mapping[str, Any]]) -> int:
    """Index just after the first user message (the task); the leading system messages
    when there is none."""
    for index, message in enumerate(messages):
        if message.get("role") == "user":
            return index + 1
        if message.get("role") not in _SYSTEM_ROLES:
            return index
    return len(messages)


def _compact_text(text: str, config: MercuryConfig) -> str | None:
    """The head+tail form of ``text``, or ``None`` when it should stay as it is."""
    size = len(text)
    head, tail = config.compaction_head_chars, config.compaction_tail_chars
    if size <= config.compaction_min_chars:
        return None
    if size <= head + tail + _MARKER_ROOM and _MARKER_PREFIX in text:
        return None  # already compacted
    marker = compaction_marker(size)
    if size <= head + tail + len(marker) + 2:
        return None  # would not get shorter
    kept_head, kept_tail = cut_edges(text[: head + CUT_REACH],
                                     text[max(0, size - tail - CUT_REACH):], head, tail)
    return f"{kept_head}\n{marker}\n{kept_tail}"


def _compact_message(message: Mapping[str, Any], config: MercuryConfig) -> Message | None:
    content = message.get("content")
    if isinstance(content, str):
        new_text = _compact_text(content, config)
        return None if new_text is None else {**message, "content": new_text}
    if isinstance(content, list):
        parts: list[Any] = []
        changed = False
        for part in content:
            text = part.get("text") if isinstance(part, Mapping) else None
            new_part = _compact_text(text, config) if isinstance(text, str) else None
            if new_part is None:
                parts.append(part)
            else:
                parts.append({**part, "text": new_part})
                changed = True
        return {**message, "content": parts} if changed else None
    return None


def compact_messages(
    messages: Sequence[Mapping[str, Any]],
    config: MercuryConfig,
    *,
    keep_recent: int | None = None,
) -> CompactionResult:
    """Head+tail compaction of older long texts; see the module docstring.

    ``keep_recent`` overrides ``config.compaction_keep_recent`` for one call. Unchanged
    messages come back as shallow copies; the input is never mutated. Linear in the
    number of messages, with at most head + tail characters copied per compacted one.
    """
    keep = config.compaction_keep_recent if keep_recent is None else max(0, keep_recent)
    recent_start = max(0, len(messages) - keep)
    task_end = protected_prefix_end(messages)
    out: list[Message] = []
    compacted = chars_before = chars_after = 0
    for index, message in enumerate(messages):
        size = message_chars(message)
        chars_before += size
        new: Message | None = None
        if task_end <= index < recent_start and message.get("role") not in _SYSTEM_ROLES:
            new = _compact_message(message, config)
        if new is None:
            out.append(dict(message))
            chars_after += size
        else:
            out.append(new)
            chars_after += message_chars(new)
            compacted += 1
    return CompactionResult(tuple(out), compacted, chars_before, chars_after)


def _summary_span(messages: Sequence[Mapping[str, Any]], keep: int) -> tuple[int, int]:
    start = protected_prefix_end(messages)
    end = max(start, len(messages) - keep)
    while start < end < len(messages) and messages[end].get("role") == "tool":
        end -= 1  # keep an assistant tool call together with its results
    return start, end


def _clip(text: str) -> str:
    if len(text) <= 2 * _TRANSCRIPT_CLIP + 40:
        return text
    return keep_head_and_tail(text, 2 * _TRANSCRIPT_CLIP, lambda cut: f"[… {cut} chars omitted …]")


def _render(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, Mapping)
        )
    lines = [f"### {message.get('role', '?')}"]
    if content:
        lines.append(_clip(str(content)))
    for call in message.get("tool_calls") or ():
        function = call.get("function", {}) if isinstance(call, Mapping) else {}
        arguments = _clip(str(function.get("arguments", "")))
        lines.append(f"→ {function.get('name', '?')}({arguments})")
    return "\n".join(lines)


def plan_summary(
    messages: Sequence[Mapping[str, Any]],
    config: MercuryConfig,
    *,
    keep_recent: int | None = None,
    max_transcript_chars: int = 120_000,
) -> SummaryPlan | None:
    """Which older turns to summarize, and the request that asks the model to.

    The span runs from just after the task to the kept recent messages, moved earlier so
    the kept part never starts with a tool result. ``None`` when fewer than two messages
    could be replaced. The transcript clips each message to head+tail and, over
    ``max_transcript_chars``, leaves out the oldest messages first (saying so).
    """
    keep = config.compaction_keep_recent if keep_recent is None else max(0, keep_recent)
    start, end = _summary_span(messages, keep)
    if end - start < 2:
        return None
    rendered: list[str] = []
    used = 0
    for message in reversed(messages[start:end]):
        block = _render(message)
        if rendered and used + len(block) > max_transcript_chars:
            rendered.append(f"[… {end - start - len(rendered)} earlier messages left out …]")
            break
        rendered.append(block)
        used += len(block)
    task = messages[start - 1].get("content") if start > 0 else None
    if start > 0 and messages[start - 1].get("role") != "user":
        task = None
    task_text = _clip(str(task)) if task else "(no task message)"
    user_prompt = (
        f"The task (keep it):\n{task_text}\n\n"
        f"Conversation to summarize ({end - start} messages, oldest first):\n\n"
        + "\n\n".join(reversed(rendered))
        + "\n\nWrite the summary now."
    )
    request: tuple[Message, ...] = (
        {"role": "system", "content": SUMMARY_INSTRUCTIONS},
        {"role": "user", "content": user_prompt},
    )
    return SummaryPlan(start=start, end=end, request=request)


def apply_summary(
    messages: Sequence[Mapping[str, Any]], plan: SummaryPlan, summary_text: str
) -> tuple[Message, ...]:
    """``messages`` with ``plan``'s span replaced by one user message holding the summary.

    Raises ``ValueError`` for a blank summary or a plan that no longer fits ``messages``
    (history is never replaced by nothing, and pairing is never broken).
    """
    if not summary_text.strip():
        raise ValueError("the model returned an empty summary")
    if not 0 <= plan.start < plan.end <= len(messages):
        raise ValueError("the summary plan does not fit these messages")
    if plan.end < len(messages) and messages[plan.end].get("role") == "tool":
        raise ValueError("the summary plan would separate tool results from their call")
    summary: Message = {
        "role": "user",
        "content": SUMMARY_HEADER.format(count=plan.replaced) + "\n" + summary_text.strip(),
    }
    return (
        *(dict(m) for m in messages[: plan.start]),
        summary,
        *(dict(m) for m in messages[plan.end :]),
    )
