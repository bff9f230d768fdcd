"""Context-window arithmetic: output cap, tool-result size, and what a context overflow means.

Pure rules (no I/O):

* ``output_cap``: ``max_tokens`` asked of a model is at most ``output_window_fraction`` of its
  known (or assumed) window, so a rambling model can never fill the server's context, and
  at most ``reply_max_tokens`` for a small or unknown window, so it cannot run for minutes.
* ``tool_result_chars``: one tool result may hold at most ``tool_result_window_fraction`` of
  the usable prompt budget (in characters); tools cut their results to it at the source.
* ``parse_context_overflow``: a provider's 400 that says the prompt does not fit (OpenAI
  ``context_length_exceeded``, llama.cpp "exceeds the available context size (8192
  tokens)", vLLM "maximum context length is N tokens", Anthropic "prompt is too long: N
  tokens > M maximum", litellm's ``ContextWindowExceededError``), with the window and the
  prompt size when the text names them.
* ``step_overflow``: such an error is not a failure. The window it names is learned, the
  conversation is shrunk to a smaller target and the same step is sent again; only after
  ``context_overflow_retries`` attempts that still do not fit does the task pause honestly.
  The output cap is never what is cut: the prompt is.
* ``step_overflow_shrunk``: after the shrink, a prompt that is still over its target with
  nothing cut has nothing left to cut, so the task pauses honestly now instead of resending.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.bounded import GiveUp, bounded
from mercury_nb.contract.recovery.compaction import (
    CompactionResult,
    compaction_marker,
    message_chars,
    protected_prefix_end,
)
from mercury_nb.contract.recovery.memory_governor import (
    CHARS_PER_TOKEN,
    estimate_tokens,
    usable_budget,
)
from mercury_nb.contract.text_cut import keep_head_and_tail

OVERFLOW_SHRINK = 0.75
"""Without numbers in the error, each retry aims at this fraction of the last prompt."""
SAFETY = 0.9
"""Aim this far under a window learned from an error (token counts are estimates)."""
MIN_TOOL_RESULT_CHARS = 2000
SMALLEST_RESULT_CHARS = 300
"""A tool result is never cut below this, however small the window."""

_OVERFLOW_MARKERS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "context size",
    "maximum context",
    "prompt is too long",
    "too many tokens",
    "input is too long",
    "exceed_context_size",
    "reduce the length of the messages",
    "contextwindowexceedederror",
)
_WINDOW_PATTERNS = (
    re.compile(r"available context size \((\d[\d,]*) tokens?\)", re.I),
    re.compile(r"maximum context length is (\d[\d,]*) tokens?", re.I),
    re.compile(r"context (?:window|length|size) (?:of|is) (\d[\d,]*)", re.I),
    re.compile(r"tokens? > (\d[\d,]*) maximum", re.I),
    re.compile(r"n_ctx\"?\s*[:=]\s*(\d+)", re.I),
)
_PROMPT_PATTERNS = (
    re.compile(r"prompt is too long: (\d[\d,]*) tokens?", re.I),
    re.compile(r"resulted in (\d[\d,]*) tokens?", re.I),
    re.compile(r"\((\d[\d,]*) in the messages", re.I),
    re.compile(r"n_prompt_tokens\"?\s*[:=]\s*(\d+)", re.I),
    re.compile(r"request has (\d[\d,]*) (?:input )?tokens?", re.I),
)


@dataclass(frozen=True)
class ContextOverflow:
    """A provider said the request does not fit its context."""

    window: int | None = None
    """The context window the error names, in tokens."""
    prompt_tokens: int | None = None
    """The prompt size the provider counted, when it says."""


@dataclass(frozen=True)
class OverflowState:
    """Overflow retries of the current step (reset when a step gets through)."""

    retries: int = 0


@dataclass(frozen=True)
class OverflowObservation:
    overflow: ContextOverflow
    estimated_tokens: int
    """Our estimate of the prompt that overflowed (messages and tool schemas)."""
    known_window: int | None
    output_reserve: int


@dataclass(frozen=True)
class ShrinkAndRetry:
    """Learn ``window`` (if any), shrink the prompt to ``target_tokens`` (our estimate's
    units) and send the same step again."""

    window: int | None
    target_tokens: int


@dataclass(frozen=True)
class PauseForOverflow:
    """Pause honestly for ``why`` (the pause banner's words): the request still does not fit."""

    why: str


OverflowDecision = ShrinkAndRetry | PauseForOverflow


@dataclass(frozen=True)
class ShrinkObservation:
    """What the shrink ordered by :class:`ShrinkAndRetry` did to the prompt."""

    overflow: OverflowObservation
    """The overflow the shrink answered."""
    cut: int
    """Messages the shrink cut."""
    tokens_after: int
    """Our estimate of the shrunk prompt (messages and tool schemas)."""
    target_tokens: int


@dataclass(frozen=True)
class SendShrunk:
    """The shrunk prompt goes out: tell the user and send the same step again."""


ShrunkDecision = SendShrunk | PauseForOverflow


def _number(patterns: tuple[re.Pattern[str], ...], text: str) -> int | None:
    for pattern in patterns:
        found = pattern.search(text)
        if found:
            value = int(found.group(1).replace(",", ""))
            if value > 0:
                return value
    return None


def parse_context_overflow(status: int | None, kind: str, message: str) -> ContextOverflow | None:
    """The overflow a provider error reports, or None when the error is about something else."""
    lowered = message.lower()
    said = kind == "context_window" or any(marker in lowered for marker in _OVERFLOW_MARKERS)
    if not said or status not in (None, 400, 413, 422):
        return None
    if "rate limit" in lowered or "quota" in lowered:
        return None
    return ContextOverflow(window=_number(_WINDOW_PATTERNS, message),
                           prompt_tokens=_number(_PROMPT_PATTERNS, message))


def output_cap(window: int | None, asked: int, config: MercuryConfig) -> int:
    """``max_tokens`` for a request: ``asked``, at most the window's output fraction, and at
    most ``reply_max_tokens`` when the window is unknown or no larger than
    ``reply_cap_window`` (a large cloud window keeps what was asked, cut by the fraction)."""
    cap = asked if window is None else min(asked, int(window * config.output_window_fraction))
    if window is None or window <= config.reply_cap_window:
        cap = min(cap, config.reply_max_tokens)
    return max(1, cap)


def tool_result_chars(window: int | None, output_reserve: int, config: MercuryConfig,
                      fixed_tokens: int = 0) -> int | None:
    """The characters one tool result may hold in this window (None: no window known):
    ``tool_result_window_fraction`` of the usable budget, at least ``MIN_TOOL_RESULT_CHARS``,
    yet never more than ``tool_result_room_fraction`` of the room the fixed part of every
    request (``fixed_tokens``: the tool definitions, the system prompt and the task) leaves,
    so a small window still holds a few steps (at least ``SMALLEST_RESULT_CHARS``)."""
    if window is None:
        return None
    budget = usable_budget(window, output_reserve)
    chars = max(MIN_TOOL_RESULT_CHARS,
                int(budget * CHARS_PER_TOKEN * config.tool_result_window_fraction))
    room = int((budget - fixed_tokens) * CHARS_PER_TOKEN * config.tool_result_room_fraction)
    return min(chars, max(SMALLEST_RESULT_CHARS, room))


def step_overflow(
    state: OverflowState, observation: OverflowObservation, config: MercuryConfig
) -> tuple[OverflowState, OverflowDecision]:
    """What to do after a context overflow; see the module docstring."""
    if isinstance(bounded(state.retries, config.context_overflow_retries), GiveUp):
        return state, PauseForOverflow(overflow_pause_why(observation, state.retries))
    overflow = observation.overflow
    window = overflow.window or observation.known_window
    estimate = max(1, observation.estimated_tokens)
    shrink = OVERFLOW_SHRINK ** (state.retries + 1)
    if window is not None:
        budget = usable_budget(window, min(observation.output_reserve, window // 4))
        # the provider counts tokens its own way: scale our estimate by what it counted
        ratio = max(1.0, (overflow.prompt_tokens or 0) / estimate)
        target = int(budget * SAFETY / ratio * (OVERFLOW_SHRINK ** state.retries))
        target = min(target, int(estimate * shrink)) if state.retries else target
    else:
        target = int(estimate * shrink)
    return replace(state, retries=state.retries + 1), ShrinkAndRetry(window, max(1, target))


def step_overflow_shrunk(
    state: OverflowState, observation: ShrinkObservation, config: MercuryConfig
) -> tuple[OverflowState, ShrunkDecision]:
    """After the shrink: nothing cut and still over the target is nothing left to cut, an
    honest pause; anything else is sent again (the provider judges whether it fits now).
    ``config`` is unused (the retry budget was spent in :func:`step_overflow`)."""
    if observation.cut == 0 and observation.tokens_after > observation.target_tokens:
        return state, PauseForOverflow(overflow_pause_why(observation.overflow, state.retries))
    return state, SendShrunk()


def overflow_pause_why(observation: OverflowObservation, retries: int) -> str:
    """Why an overflow pauses: the words the pause banner (``Paused(why)``) carries."""
    window = observation.overflow.window or observation.known_window
    size = f"its {window:,}-token context" if window else "its context"
    return (
        f"the model still reports the request does not fit {size} "
        f"after shrinking the conversation {retries} time{'s' if retries != 1 else ''} "
        f"(about {observation.estimated_tokens:,} tokens were sent). Switch to a model with "
        "a larger context window if you can (or set MERCURY_CONTEXT_WINDOW)"
    )


MIN_KEPT_CHARS = 1000
"""A message is never cut below this many characters (head and tail together)."""


def shrink_floor(config: MercuryConfig, result_chars: int | None) -> int:
    """The smallest size ``shrink_to_fit`` cuts a message to under ordinary pressure: what
    compaction keeps, or half a tool result's budget when that is smaller; never below
    ``MIN_KEPT_CHARS`` unless the window's results are themselves that small."""
    if result_chars is None:
        return max(MIN_KEPT_CHARS, config.compaction_min_chars)
    floor = min(config.compaction_min_chars, result_chars // 2)
    return max(min(MIN_KEPT_CHARS, result_chars // 2), floor)


def shrink_to_fit(
    messages: Sequence[dict[str, Any]], target_tokens: int, floor: int = MIN_KEPT_CHARS
) -> CompactionResult:
    """Cut the largest texts to head and tail, newest messages included, until the estimate
    is within ``target_tokens`` (or nothing more can be cut); no text is cut below ``floor``
    characters. The system prompt and the task are never touched, nor tool-call arguments,
    so tool-call pairing holds."""
    current = [dict(m) for m in messages]
    protected = protected_prefix_end(current)
    before = sum(message_chars(m) for m in current)
    cut = 0
    while (excess := estimate_tokens(current) - target_tokens) > 0:
        sizes = [
            (len(m["content"]), i) for i, m in enumerate(current)
            if i >= protected and isinstance(m.get("content"), str)
            and len(m["content"]) > floor
        ]
        if not sizes:
            break
        size, index = max(sizes)
        marker = compaction_marker(size)
        keep = max(floor, size - excess * CHARS_PER_TOKEN - len(marker) - 2)
        shorter = keep_head_and_tail(current[index]["content"], keep, marker)
        if len(shorter) >= size:
            break
        current[index] = {**current[index], "content": shorter}
        cut += 1
    after = sum(message_chars(m) for m in current)
    return CompactionResult(tuple(current), cut, before, after)
