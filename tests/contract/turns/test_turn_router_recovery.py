"""Table tests of the recovery routes through the turn router: pressure pauses from the memory
governor, budget pauses, and attempts cut by the stall watchdog."""

from __future__ import annotations

import pytest

from mercury_nb.contract.banners import banner_text
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    BudgetPause,
    Paused,
    ProviderFailure,
    TruncationPause,
    WindowTooSmall,
)
from mercury_nb.contract.escalation.provider_policy import CONTINUE_FROM_PARTIAL
from mercury_nb.contract.recovery.memory_governor import PressureObservation, pressure_pause
from mercury_nb.contract.spend import BudgetHit, CostBudgetHit, TokenBudgetHit
from mercury_nb.contract.turns.router_state import (
    STALL_KIND,
    FinishWith,
    NextTurn,
    ProviderTrouble,
    RetryStep,
    RouterState,
    TurnFacts,
    user,
)
from mercury_nb.contract.turns.turn_router import step_router
from mercury_nb.contract.turns.turn_verdict import TurnVerdict

CONFIG = MercuryConfig(model="a", fallbacks=("b",), retry_base_s=0.0)
MEMORY = pressure_pause(PressureObservation(10, 100, rss_mb=900.0, limit_mb=512), CONFIG).why
CONTEXT = pressure_pause(PressureObservation(150_000, 120_000), CONFIG).why
STALL = "Task stalled 8 minutes with no progress (was: waiting for a)"


@pytest.mark.parametrize(
    ("why", "reason"),
    [
        pytest.param(
            MEMORY,
            "the kernel is using 900 MB of memory, over its 512 MB limit, even after compacting "
            "the conversation. Free some memory in the kernel (or raise MERCURY_MEMORY_LIMIT_MB)",
            id="memory",
        ),
        pytest.param(
            CONTEXT,
            "the conversation is still too large for the model's context (about 150,000 tokens "
            "for a budget of 120,000), even after compacting the conversation. Switch to a "
            "model with a larger context window if you can",
            id="context",
        ),
        pytest.param("the kernel is out of memory", "the kernel is out of memory", id="plain"),
    ],
)
def test_a_pressure_pause_keeps_the_governors_words(why: str, reason: str) -> None:
    assert why == reason  # the governor's words, as the Paused ending carries them
    banner = banner_text(Paused(why), [])
    assert banner.count("I've paused for now") == 1
    assert banner.count('Send "continue"') + banner.count('send "continue"') == 1


@pytest.mark.parametrize("verdict", list(TurnVerdict), ids=lambda v: v.value)
def test_a_pressure_pause_ends_the_task_whatever_the_verdict(verdict: TurnVerdict) -> None:
    state = RouterState.start("build it", CONFIG)
    facts = TurnFacts(verdict=verdict, pressure_pause=CONTEXT)
    new_state, decision = step_router(state, facts, CONFIG)
    assert decision == FinishWith(Paused(CONTEXT))
    assert new_state == state


@pytest.mark.parametrize("hit", [CostBudgetHit(0.52, 0.5), TokenBudgetHit(3600, 3000)],
                         ids=["cost", "tokens"])
@pytest.mark.parametrize("verdict", list(TurnVerdict), ids=lambda v: v.value)
def test_a_reached_budget_pauses_the_task_whatever_the_verdict(
    verdict: TurnVerdict, hit: BudgetHit
) -> None:
    state = RouterState.start("build it", CONFIG)
    new_state, decision = step_router(state, TurnFacts(verdict=verdict, budget_hit=hit), CONFIG)
    assert decision == FinishWith(BudgetPause(hit))
    assert new_state == state


def stalled(after_output: bool) -> TurnFacts:
    trouble = ProviderTrouble(
        provider="a", message=STALL, kind=STALL_KIND, streamed_output=after_output
    )
    return TurnFacts(verdict=TurnVerdict.INTERRUPTED, trouble=trouble)


@pytest.mark.parametrize(
    ("after_output", "messages"),
    [
        pytest.param(False, (), id="nothing-streamed-resends-the-step"),
        pytest.param(True, (user(CONTINUE_FROM_PARTIAL),), id="partial-text-is-continued"),
    ],
)
def test_a_stalled_attempt_is_retried_on_the_same_provider(
    after_output: bool, messages: tuple[dict[str, str], ...]
) -> None:
    state, decision = step_router(
        RouterState.start("build it", CONFIG), stalled(after_output), CONFIG
    )
    assert isinstance(decision, RetryStep)
    assert decision.directive.provider_index == 0
    assert decision.directive.messages == messages
    assert state.providers.ledger == {"a": f"stalled: {STALL}"}


def test_stalls_move_down_the_chain_then_fail_naming_the_stall() -> None:
    config = CONFIG.with_changes(retry_attempts=0)
    state = RouterState.start("build it", config)
    state, first = step_router(state, stalled(False), config)
    assert isinstance(first, RetryStep)
    assert first.notice == f"⚠ a: stalled: {STALL} — switching to b and continuing."
    state, last = step_router(state, stalled(False), config)
    assert isinstance(last, FinishWith)
    assert isinstance(last.ending, ProviderFailure)
    assert last.ending.last_error == f"stalled: {STALL}"


SMALL = WindowTooSmall(2048, 1536, 512, 256, 1525, False, compact_tokens=808)


@pytest.mark.parametrize("verdict", list(TurnVerdict), ids=lambda v: v.value)
@pytest.mark.parametrize("pressure", [None, CONTEXT], ids=["alone", "with-a-pressure-pause"])
def test_a_window_too_small_fails_the_task_whatever_else(
    verdict: TurnVerdict, pressure: str | None
) -> None:
    state = RouterState.start("build it", CONFIG)
    facts = TurnFacts(verdict=verdict, window_too_small=SMALL, pressure_pause=pressure)
    new_state, decision = step_router(state, facts, CONFIG)
    assert decision == FinishWith(SMALL)
    assert new_state == state


@pytest.mark.parametrize(
    ("task", "mode", "cut_write", "reply_cap", "starts"),
    [
        pytest.param("Create app.py with a CLI", "execute", False, 2048,
                     "[SYSTEM] Your previous response hit the output-token limit and was cut "
                     "off… Do not continue it and do not repeat it. Take the next step",
                     id="work-prose-takes-the-next-step"),
        pytest.param("What does app.py do?", "execute", False, 512,
                     "[SYSTEM] Your previous response hit the output-token limit and was cut "
                     "off… Do not continue it. Answer again from the start, shorter and "
                     "complete, within 256 tokens", id="question-answered-again-within-half"),
        pytest.param("Create app.py with a CLI", "chat", False, 1000,
                     "[SYSTEM] Your previous response hit the output-token limit and was cut "
                     "off… Do not continue it. Answer again from the start, shorter and "
                     "complete, within 500 tokens", id="chat-mode-answers-again"),
        pytest.param("Create app.py with a CLI", "execute", True, 2048,
                     "[SYSTEM: WRITE TRUNCATED] Your file write was cut off… the file was NOT "
                     "written. Do NOT retry the same giant write.", id="cut-write-in-sections"),
    ],
)
def test_a_cut_reply_is_routed_by_what_was_cut_and_what_the_task_is(
    task: str, mode: str, cut_write: bool, reply_cap: int, starts: str
) -> None:
    config = CONFIG.with_changes(mode=mode)
    state = RouterState.start(task, config)
    facts = TurnFacts(verdict=TurnVerdict.TRUNCATED, cut_write=cut_write, reply_cap=reply_cap)
    state, decision = step_router(state, facts, config)
    assert isinstance(decision, NextTurn)
    (message,) = decision.directive.messages
    assert message["content"].startswith(starts)
    _, again = step_router(state, facts, config)
    # cut prose again ends in the truncation pause; a cut write keeps its resume rounds
    assert isinstance(again, NextTurn) if cut_write else again == FinishWith(TruncationPause(1))
