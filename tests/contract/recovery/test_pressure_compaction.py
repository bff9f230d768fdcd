"""A governor's Compact: which passes run for which pressure, decided in the pure core."""

from __future__ import annotations

from typing import Any

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.compaction import compact_messages, message_chars
from mercury_nb.contract.recovery.memory_governor import PressureReason, estimate_tokens
from mercury_nb.contract.recovery.pressure_compaction import (
    compact_for_pressure,
    needs_second_pass,
)

CONFIG = MercuryConfig(compaction_keep_recent=2, compaction_min_chars=2_000,
                       compaction_head_chars=500, compaction_tail_chars=500)


@pytest.mark.parametrize(
    ("reason", "tokens", "target", "second"),
    [
        pytest.param("context", 1_001, 1_000, True, id="context-still-over"),
        pytest.param("context", 1_000, 1_000, False, id="context-just-fits"),
        pytest.param("context", 10, 1_000, False, id="context-well-under"),
        pytest.param("memory", 1_001, 1_000, False, id="memory-over-the-prompt-budget"),
        pytest.param("memory", 10, 1_000, False, id="memory-under"),
    ],
)
def test_only_a_context_compaction_still_over_its_target_runs_the_second_pass(
        reason: PressureReason, tokens: int, target: int, second: bool) -> None:
    assert needs_second_pass(reason, tokens, target) is second


def conversation() -> list[dict[str, Any]]:
    """System, task, an old long tool result and a recent one too big alone."""
    return [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Do the task."},
        {"role": "assistant", "content": "old " * 2_000},
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": "recent " * 3_000},
    ]


FIRST = compact_messages(conversation(), CONFIG)
AFTER_FIRST = estimate_tokens(FIRST.messages)


@pytest.mark.parametrize(
    ("reason", "target", "passes"),
    [
        pytest.param("memory", 100, 1, id="memory-one-pass-even-when-over"),
        pytest.param("context", AFTER_FIRST, 1, id="context-fits-after-one-pass"),
        pytest.param("context", AFTER_FIRST // 3, 2, id="context-over-cuts-a-recent-text"),
    ],
)
def test_the_passes_run_and_count_together(reason: PressureReason, target: int,
                                           passes: int) -> None:
    result = compact_for_pressure(conversation(), reason, target, CONFIG, None)
    assert result.chars_before == sum(message_chars(m) for m in conversation())
    recent = result.messages[-1]["content"]
    if passes == 1:
        assert result == FIRST
        assert recent == "recent " * 3_000  # the recent text is the first pass's to keep
    else:
        assert result.compacted > FIRST.compacted
        assert len(recent) < len("recent " * 3_000)
        assert estimate_tokens(result.messages) < AFTER_FIRST
        assert result.messages[:2] == tuple(conversation()[:2])  # system and task untouched
