"""Table tests of the window fit: which tool set a window gets, and when nothing fits."""

from __future__ import annotations

from typing import Any

import pytest

from mercury_nb.contract.banners import banner_text
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import WindowTooSmall
from mercury_nb.contract.recovery.context_budget import output_cap
from mercury_nb.contract.recovery.window_fit import (
    FitObservation,
    FitState,
    OfferTools,
    larger_window,
    prefix_fit,
    set_changes,
    step_fit,
)

SYSTEM, FULL, COMPACT = 256, 1525, 808
"""The sizes measured of the real system prompt and tool sets (see tests/tools)."""

AUTO = MercuryConfig(tool_set="auto")
"""``auto`` picks the set by the window (the default, ``full``, never switches)."""


def observe(window: int | None, config: MercuryConfig | None = None, **kw: Any) -> FitObservation:
    config = config or AUTO
    reply = output_cap(window, config.max_output_tokens, config)
    sizes: dict[str, Any] = {"system_tokens": SYSTEM, "full_tokens": FULL,
                             "compact_tokens": COMPACT, **kw}
    return FitObservation(window=window, reply_tokens=reply, **sizes)


@pytest.mark.parametrize(
    ("window", "tool_set", "expected"),
    [
        # auto: full while system + full (1,781) <= half the budget
        pytest.param(None, "auto", "full", id="unknown-window-full"),
        pytest.param(200_000, "auto", "full", id="cloud-full"),
        pytest.param(8192, "auto", "full", id="8k-full (1,781 <= 3,072)"),
        pytest.param(6144, "auto", "full", id="6k-full (1,781 <= 2,304)"),
        pytest.param(4096, "auto", "compact", id="4k-compact (1,781 > 1,536)"),
        pytest.param(2048, "auto", "compact", id="2k-compact (1,064 <= 1,536)"),
        pytest.param(1536, "auto", "compact", id="1.5k-compact (1,064 <= 1,152)"),
        pytest.param(1024, "auto", "fail", id="1k-fails-even-compact (1,064 > 768)"),
        # configured sets are used as they are
        pytest.param(2048, "full", "fail", id="2k-full-configured-fails"),
        pytest.param(4096, "full", "full", id="4k-full-configured-fits"),
        pytest.param(200_000, "compact", "compact", id="cloud-compact-configured"),
        pytest.param(None, "compact", "compact", id="unknown-compact-configured"),
        pytest.param(1024, "compact", "fail", id="1k-compact-configured-fails"),
    ],
)
def test_the_tool_set_a_window_gets(window: int | None, tool_set: str, expected: str) -> None:
    config = MercuryConfig(tool_set=tool_set)
    _, decision = step_fit(FitState(), observe(window, config), config)
    match decision:
        case OfferTools(tool_set=chosen):
            assert chosen == expected
        case WindowTooSmall():
            assert expected == "fail"


def test_the_exact_small_window_failure_with_the_full_set() -> None:
    config = MercuryConfig(tool_set="full")
    state, decision = step_fit(FitState(), observe(2048, config), config)
    assert state == FitState()
    assert decision == WindowTooSmall(window=2048, budget=1536, reply_tokens=512,
                                      system_tokens=SYSTEM, tools_tokens=FULL, compact=False,
                                      compact_tokens=COMPACT, larger_window=8192)
    assert banner_text(decision, []).startswith(
        "I couldn't finish this one — this model's 2,048-token window cannot hold the tool "
        "definitions (about 1,500 tokens)."
    )


def test_the_compact_set_is_not_offered_as_a_fix_when_it_does_not_fit_either() -> None:
    config = MercuryConfig(tool_set="full")
    _, decision = step_fit(FitState(), observe(1024, config), config)
    assert isinstance(decision, WindowTooSmall)
    assert decision.compact_tokens is None and not decision.compact
    _, auto = step_fit(FitState(), observe(1024), AUTO)
    assert isinstance(auto, WindowTooSmall) and auto.compact and auto.tools_tokens == COMPACT


@pytest.mark.parametrize(
    ("before", "window", "notice"),
    [
        pytest.param(None, 2048, "Using the compact tool set (short descriptions, about 808 "
                     "tokens instead of 1,525): the full one leaves too little of this model's "
                     "2,048-token window for the conversation.", id="first-compact-request"),
        pytest.param("full", 2048, "Using the compact tool set (short descriptions, about 808 "
                     "tokens instead of 1,525): the full one leaves too little of this model's "
                     "2,048-token window for the conversation.", id="window-learned-smaller"),
        pytest.param("compact", 2048, None, id="said-once"),
        pytest.param(None, 8192, None, id="full-says-nothing"),
        pytest.param("compact", 8192, None, id="back-to-full-says-nothing"),
    ],
)
def test_the_compact_set_is_announced_when_it_starts(
    before: str | None, window: int, notice: str | None
) -> None:
    config = AUTO
    state, decision = step_fit(FitState(before), observe(window), config)  # type: ignore[arg-type]
    assert isinstance(decision, OfferTools)
    assert decision.notice == notice
    assert state == FitState(decision.tool_set)


def test_a_configured_compact_set_is_announced_as_configured() -> None:
    config = MercuryConfig(tool_set="compact")
    _, decision = step_fit(FitState(), observe(200_000, config), config)
    assert decision == OfferTools("compact", "Using the compact tool set "
                                  "(MERCURY_TOOL_SET=compact): about 808 tokens instead of 1,525.")


@pytest.mark.parametrize(
    ("window", "task", "expected"),
    [
        pytest.param(None, 10**6, None, id="unknown-window-never-judged"),
        pytest.param(8192, 100, None, id="fits-a-resume-can-succeed"),
        pytest.param(8192, 4363, None, id="just-fits (1,781 + 4,363 = 6,144)"),
        pytest.param(8192, 4364, "task", id="task-one-over"),
        pytest.param(2048, 472, None, id="2k-compact-and-task-fit (1,064 + 472 = 1,536)"),
        pytest.param(2048, 473, "task", id="2k-task-one-over"),
        pytest.param(1024, 10, "tools", id="tools-alone-do-not-fit"),
    ],
)
def test_a_pause_promises_a_resume_only_when_what_is_never_cut_fits(
    window: int | None, task: int, expected: str | None
) -> None:
    decision = prefix_fit(observe(window), task, AUTO)
    if expected is None:
        assert decision is None
        return
    assert isinstance(decision, WindowTooSmall)
    assert (decision.task_tokens > 0) == (expected == "task")
    if expected == "task":
        assert decision.task_tokens == task
        assert "cannot hold the task with the tool definitions" in banner_text(decision, [])


def test_a_task_that_fits_only_beside_the_compact_set_offers_it() -> None:
    config = MercuryConfig(tool_set="full")
    decision = prefix_fit(observe(4096, config), 1400, config)  # 1,781 + 1,400 > 3,072
    assert isinstance(decision, WindowTooSmall)
    assert decision.compact_tokens == COMPACT  # 256 + 808 + 1,400 <= 3,072


@pytest.mark.parametrize(
    ("window", "task", "expected"),
    [
        pytest.param(2048, 0, 8192, id="2k-suggests-8k"),
        pytest.param(512, 0, 8192, id="tiny-suggests-8k"),
        pytest.param(8192, 0, 16384, id="always-larger-than-now"),
        pytest.param(4096, 9000, 32768, id="a-large-task-needs-more"),
    ],
)
def test_the_larger_window_suggested(window: int, task: int, expected: int) -> None:
    assert larger_window(observe(window), AUTO, task) == expected


@pytest.mark.parametrize(
    ("before", "window", "expected"),
    [
        pytest.param(None, 2048, False, id="no-request-yet"),
        pytest.param("full", 2048, True, id="learned-small-window-moves-to-compact"),
        pytest.param("full", 8192, False, id="full-stays-full"),
        pytest.param("compact", 2048, False, id="compact-stays-compact"),
        pytest.param("compact", 200_000, True, id="a-larger-window-moves-back"),
    ],
)
def test_an_overflow_is_worth_resending_when_the_tool_set_changes(
    before: str | None, window: int, expected: bool
) -> None:
    state = FitState(before)  # type: ignore[arg-type]
    assert set_changes(state, observe(window), AUTO) is expected
