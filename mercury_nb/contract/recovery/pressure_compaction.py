"""What a governor's ``Compact`` runs: head+tail compaction, then, when the prompt is still over
its budget, the second pass that cuts the largest texts (a recent one too).

The memory governor (:mod:`~mercury_nb.contract.recovery.memory_governor`) decides *that*
the conversation is compacted; :func:`compact_for_pressure` decides *how far*: a ``memory``
compaction runs the one pass (what is cut is what frees memory), a ``context`` compaction
runs the second pass only while the first left the estimate above ``target_tokens``
(:func:`needs_second_pass`). The result counts both passes' cuts against the size before
the first. Pure: the loop replaces its message list with the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.compaction import CompactionResult, compact_messages
from mercury_nb.contract.recovery.context_budget import shrink_floor, shrink_to_fit
from mercury_nb.contract.recovery.memory_governor import PressureReason, estimate_tokens


def needs_second_pass(reason: PressureReason, tokens_after_first: int,
                      target_tokens: int) -> bool:
    """Whether a compaction for ``reason`` goes on to cut the largest texts: only for the
    context, and only while the first pass left the prompt over its target."""
    return reason == "context" and tokens_after_first > target_tokens


def compact_for_pressure(messages: Sequence[Mapping[str, Any]], reason: PressureReason,
                         target_tokens: int, config: MercuryConfig,
                         result_chars: int | None) -> CompactionResult:
    """The messages after the passes ``reason`` calls for (see the module); ``result_chars``
    is the tool results' budget of this window (None: none), which bounds how far the second
    pass cuts a text (:func:`~mercury_nb.contract.recovery.context_budget.shrink_floor`)."""
    first = compact_messages(messages, config)
    if not needs_second_pass(reason, estimate_tokens(first.messages), target_tokens):
        return first
    shrunk = shrink_to_fit(first.messages, max(1, target_tokens),
                           shrink_floor(config, result_chars))
    return replace(shrunk, compacted=first.compacted + shrunk.compacted,
                   chars_before=first.chars_before)
