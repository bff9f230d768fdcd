"""Doom-loop detection, fed one model step at a time: repeats, failures, idling, cycles, echoes.

The detector fires on the first of these to reach its threshold (config fields in brackets):

* ``identical-calls``: the same tool with the same arguments, consecutively [doom_identical_calls];
* ``cycle``: an A-B-A-B… alternation of two different calls [doom_cycle_repeats times A, B];
* ``tool-failures``: consecutive calls of one tool, all failing [doom_tool_failures];
* ``idle-steps``: consecutive steps with no tool call at all [doom_idle_steps];
* ``similar-replies``: consecutive non-empty step texts whose word sets have a Jaccard
  similarity of at least doom_similarity [doom_similar_replies].

Calls are looked at in order across steps, and a call's key is its name plus its
canonical arguments (see :func:`canonical_arguments`). Steps with empty text neither count
towards nor break a run of similar replies. A step that makes a successful call not seen
before in the turn is progress: its text starts a new run of similar replies, so "Now let
me read a.py", "Now let me read b.py", … over genuinely new reads is not a loop.

Idle steps and similar replies are watched INSIDE a turn: :func:`reset_for_new_turn` clears
them, so the narration guard's rounds (each a new turn, often text only) are never cut
short; narration across turns belongs to the guard. The call-based rules run across turns.
When the detector fires it returns a fresh state: the next provider starts clean.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from typing import Literal

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.text_cut import clip
from mercury_nb.contract.untrusted import clean

DoomKind = Literal["identical-calls", "cycle", "tool-failures", "idle-steps", "similar-replies"]

LOOP_DIRECTIVE = (
    "[SYSTEM: LOOP DETECTED] The previous attempt on this task was stopped because it was "
    "stuck in a loop: {description}. Do not repeat it. Look at the current state and take a "
    "different approach that makes real progress."
)
"""Told to the next provider after a loop aborted the attempt."""

_PREVIEW_CHARS = 80
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class ToolCallObservation:
    """One tool call of a step: its name, canonical arguments JSON, and whether it succeeded."""

    name: str
    arguments: str
    ok: bool


@dataclass(frozen=True)
class StepObservation:
    """One model step: the tool calls it made, in order, and its text."""

    tool_calls: tuple[ToolCallObservation, ...] = ()
    text: str = ""


@dataclass(frozen=True)
class _CallKey:
    digest: str
    preview: str


@dataclass(frozen=True)
class DoomState:
    """Runs in progress. Arguments are kept as digests and short previews, never whole."""

    identical_run: int = 0
    failing_tool: str | None = None
    failure_run: int = 0
    recent_calls: tuple[_CallKey, ...] = ()
    idle_run: int = 0
    last_words: frozenset[str] | None = None
    similar_run: int = 0
    similar_preview: str = ""
    seen_calls: frozenset[str] = frozenset()


@dataclass(frozen=True)
class NoLoop:
    """Nothing looped."""


@dataclass(frozen=True)
class DoomLoop:
    """A loop: abort the attempt; ``description`` names what looped."""

    kind: DoomKind
    description: str


DoomVerdict = NoLoop | DoomLoop


def canonical_arguments(raw: str) -> str:
    """Tool-call arguments as compact JSON with sorted keys; malformed JSON as stripped text."""
    try:
        parsed = json.loads(raw)
        return json.dumps(parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):  # RecursionError: nested too deeply
        return raw.strip()


def jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    """Size of the intersection over size of the union; two empty sets are identical."""
    union = left | right
    return 1.0 if not union else len(left & right) / len(union)


def reply_words(text: str) -> frozenset[str]:
    """The lower-cased set of words of a reply."""
    return frozenset(word.lower() for word in _WORD.findall(text))


def reset_for_new_turn(state: DoomState) -> DoomState:
    """Forget the within-turn runs (idle steps, similar replies, calls seen this turn)."""
    return replace(
        state,
        idle_run=0,
        last_words=None,
        similar_run=0,
        similar_preview="",
        seen_calls=frozenset(),
    )


def loop_directive(loop: DoomLoop) -> str:
    """What the next provider is told about the loop that stopped the previous attempt."""
    return LOOP_DIRECTIVE.format(description=loop.description)


def observe_step(
    state: DoomState, step: StepObservation, config: MercuryConfig
) -> tuple[DoomState, DoomVerdict]:
    """Feed one step; a :class:`DoomLoop` comes with a fresh state."""
    novel = False
    for call in step.tool_calls:
        key = _key(call)
        novel = novel or (call.ok and key.digest not in state.seen_calls)
        state, loop = _observe_call(state, call, key, config)
        if loop is not None:
            return DoomState(), loop
    if step.tool_calls:
        state = replace(state, idle_run=0)
    else:
        state = replace(state, idle_run=state.idle_run + 1)
        if state.idle_run >= config.doom_idle_steps:
            description = f"{state.idle_run} steps in a row without any tool call"
            return DoomState(), DoomLoop("idle-steps", description)
    state = _observe_text(state, step.text, novel, config)
    if state.similar_run >= config.doom_similar_replies:
        description = (
            f'{state.similar_run} near-identical replies in a row: "{state.similar_preview}"'
        )
        return DoomState(), DoomLoop("similar-replies", description)
    return state, NoLoop()


def _observe_call(
    state: DoomState, call: ToolCallObservation, key: _CallKey, config: MercuryConfig
) -> tuple[DoomState, DoomLoop | None]:
    previous = state.recent_calls[-1] if state.recent_calls else None
    identical = state.identical_run + 1 if previous and previous.digest == key.digest else 1
    window = 2 * config.doom_cycle_repeats
    recent = (*state.recent_calls, key)[-window:]
    if call.ok:
        failing_tool, failures = None, 0
    elif call.name == state.failing_tool:
        failing_tool, failures = call.name, state.failure_run + 1
    else:
        failing_tool, failures = call.name, 1
    state = replace(
        state,
        identical_run=identical,
        recent_calls=recent,
        failing_tool=failing_tool,
        failure_run=failures,
        seen_calls=state.seen_calls | {key.digest},
    )
    if identical >= config.doom_identical_calls:
        description = f"{key.preview} called {identical} times in a row with the same arguments"
        return state, DoomLoop("identical-calls", description)
    if _alternates(recent, window):
        description = (
            f"alternating between {recent[0].preview} and {recent[1].preview}, "
            f"{config.doom_cycle_repeats} times in a row"
        )
        return state, DoomLoop("cycle", description)
    if failing_tool is not None and failures >= config.doom_tool_failures:
        return state, DoomLoop("tool-failures", f"{failing_tool} failed {failures} times in a row")
    return state, None


def _alternates(recent: tuple[_CallKey, ...], window: int) -> bool:
    if len(recent) < window:
        return False
    first, second = recent[0].digest, recent[1].digest
    if first == second:
        return False
    return all(key.digest == (first, second)[i % 2] for i, key in enumerate(recent))


def _observe_text(state: DoomState, text: str, novel: bool, config: MercuryConfig) -> DoomState:
    words = reply_words(text)
    if not words:
        return state
    similar = (
        not novel
        and state.last_words is not None
        and jaccard(words, state.last_words) >= config.doom_similarity
    )
    if similar:
        return replace(state, last_words=words, similar_run=state.similar_run + 1)
    return replace(state, last_words=words, similar_run=1, similar_preview=_preview(text))


def _key(call: ToolCallObservation) -> _CallKey:
    digest = hashlib.sha256(clean(f"{call.name}\0{call.arguments}").encode()).hexdigest()[:32]
    return _CallKey(digest=digest, preview=f"{call.name}({_preview(call.arguments)})")


def _preview(text: str) -> str:
    return clip(" ".join(text.split()), _PREVIEW_CHARS)  # redacted before the cut
