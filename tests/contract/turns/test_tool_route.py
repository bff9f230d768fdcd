"""The tool-support route of the turn router: tool support is learned before the final reply
is read; a prose blocker or question in a forced round is a failed round and an ignored
forcing; forced prose cut by the output limit too; a small window beside no tools."""

from __future__ import annotations

from typing import Any

import pytest

from mercury_nb.contract.banners import banner_text
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    BlockedPause,
    NoToolSupport,
    QuestionPause,
    WindowTooSmall,
)
from mercury_nb.contract.failure_banners import NO_TOOLS_FIX, no_tools_blocker
from mercury_nb.contract.turns.final_reply import FinishCall
from mercury_nb.contract.turns.router_state import (
    FinishWith,
    GuardRound,
    Measured,
    NextTurn,
    RouterDecision,
    RouterState,
    TurnFacts,
)
from mercury_nb.contract.turns.tool_route import forcing_ignored
from mercury_nb.contract.turns.turn_router import step_router
from mercury_nb.contract.vocabulary import TurnVerdict

WORK = "Create hello.py that prints hello world, and run it."
CODE = "Here:\n```python\nprint('hi')\n```"
APOLOGY = "I'm sorry, but I can't create files. Here is the code:\n```python\nprint('hi')\n```"
NO_CALLS = "I'm sorry, but I cannot call functions."
QUESTION = "Sure! What should the greeting say?"
NO_FILES = "I can't access your files, so please create hello.py yourself."
WINDOW = WindowTooSmall(window=2048, budget=1536, reply_tokens=512, system_tokens=300,
                        tools_tokens=1500, compact=False, compact_tokens=700)


def start(chain: tuple[str, ...] = ("openai/smollm2",)) -> tuple[RouterState, MercuryConfig]:
    config = MercuryConfig(model=chain[0], fallbacks=chain[1:], retry_base_s=0.0)
    return RouterState.start(WORK, config), config


def turn(reply: str = CODE, reported: bool | None = None, *, forced: bool = False,
         verdict: TurnVerdict = TurnVerdict.TEXT_STOP, **kw: Any) -> TurnFacts:
    return TurnFacts(verdict=verdict, reply_text=reply, measured=Measured((), "snapshot"),
                     tools_reported=reported, forced=forced, **kw)


def cut(reply: str = "```python\n# create_file()\n" + "x" * 50, **kw: Any) -> TurnFacts:
    return turn(reply, forced=True, verdict=TurnVerdict.TRUNCATED, **kw)


def feed(turns: list[TurnFacts], chain: tuple[str, ...] = ("openai/smollm2",)
         ) -> tuple[RouterState, list[RouterDecision]]:
    state, config = start(chain)
    decisions: list[RouterDecision] = []
    for facts in turns:
        state, decision = step_router(state, facts, config)
        decisions.append(decision)
        if isinstance(decision, FinishWith):
            break
    return state, decisions


def shape(decisions: list[RouterDecision]) -> list[str]:
    return [type(d.ending).__name__ if isinstance(d, FinishWith) else type(d).__name__
            for d in decisions]


REPORTED = NoToolSupport("openai/smollm2", "reported")
OBSERVED = NoToolSupport("openai/smollm2", "observed", 2)


@pytest.mark.parametrize(
    ("turns", "expected", "ending"),
    [
        pytest.param([turn(APOLOGY, False)], ["NoToolSupport"], REPORTED,
                     id="reported-no-tools-apology"),
        pytest.param([turn(QUESTION, False)], ["NoToolSupport"], REPORTED,
                     id="reported-no-tools-question"),
        pytest.param([turn(), turn(NO_CALLS, forced=True), turn(NO_CALLS, forced=True)],
                     ["GuardRound", "GuardRound", "NoToolSupport"], OBSERVED,
                     id="forced-round-answered-with-an-apology"),
        pytest.param([turn(), turn(QUESTION, forced=True), turn(QUESTION, forced=True)],
                     ["GuardRound", "GuardRound", "NoToolSupport"], OBSERVED,
                     id="forced-round-answered-with-a-question"),
        pytest.param([turn(), cut(), cut()], ["GuardRound", "GuardRound", "NoToolSupport"],
                     OBSERVED, id="forced-prose-cut-by-length"),
        pytest.param([turn(), turn(NO_CALLS, forced=True),
                      turn(NO_CALLS, called_tools=True, forced=True,
                           finish=FinishCall("blocked", detail="no compiler here"))],
                     ["GuardRound", "GuardRound", "BlockedPause"],
                     BlockedPause("no compiler here"), id="typed-blocked-ends-the-guard"),
        pytest.param([turn(), turn(called_tools=True, forced=True,
                                   finish=FinishCall("question", detail="Hello or hello?"))],
                     ["GuardRound", "QuestionPause"], QuestionPause("Hello or hello?"),
                     id="typed-question-ends-the-guard"),
    ],
)
def test_tool_support_is_known_before_the_reply_is_read(
    turns: list[TurnFacts], expected: list[str], ending: object
) -> None:
    _, decisions = feed(turns)
    assert shape(decisions) == expected
    last = decisions[-1]
    assert isinstance(last, FinishWith) and last.ending == ending


def test_a_forced_round_answered_in_prose_counts_as_ignored() -> None:
    state, decisions = feed([turn(), turn(QUESTION, forced=True)])
    assert shape(decisions) == ["GuardRound", "GuardRound"]
    assert state.tools.ignored_by(0) == 1
    last = decisions[-1]
    assert isinstance(last, GuardRound) and last.directive.tool_choice == "required"


def test_a_narrated_blocker_on_a_model_with_tools_gets_the_guard() -> None:
    for reported in (None, True):
        _, [decision] = feed([turn(NO_FILES, reported)])
        assert isinstance(decision, GuardRound), reported


def test_a_question_on_a_model_with_tools_is_still_asked() -> None:
    _, [decision] = feed([turn(QUESTION, True)])
    assert decision == FinishWith(QuestionPause("What should the greeting say?"))


def test_the_rotation_reaches_the_provider_with_tools() -> None:
    chain = ("openai/a", "openai/b")
    _, decisions = feed([turn(APOLOGY, False)], chain)
    [round_] = decisions
    assert isinstance(round_, GuardRound) and round_.directive.provider_index == 1


def test_a_cut_forced_round_is_forced_again_not_continued() -> None:
    _, decisions = feed([turn(), cut()])
    last = decisions[-1]
    assert isinstance(last, GuardRound)
    assert last.directive.tool_choice == "required" and last.round.round == 2


def test_a_cut_tool_call_on_a_forced_step_is_no_ignored_forcing() -> None:
    state, decisions = feed([turn(), cut(cut_write=True, cut_write_path="hello.py")])
    assert isinstance(decisions[-1], NextTurn)  # the truncation path resumes the write
    assert state.tools.ignored_by(0) == 0


@pytest.mark.parametrize(
    ("facts", "ignored"),
    [
        pytest.param(turn(forced=True), True, id="forced-prose"),
        pytest.param(turn(forced=False), False, id="auto-prose"),
        pytest.param(turn(forced=True, called_tools=True), False, id="forced-call"),
        pytest.param(cut(), True, id="forced-prose-cut"),
        pytest.param(cut(cut_write=True), False, id="forced-write-cut"),
        pytest.param(turn(forced=True, verdict=TurnVerdict.STEPS_EXHAUSTED), False,
                     id="steps-exhausted"),
        pytest.param(turn(forced=True, verdict=TurnVerdict.INTERRUPTED), False,
                     id="interrupted"),
    ],
)
def test_forcing_ignored(facts: TurnFacts, ignored: bool) -> None:
    assert forcing_ignored(facts) is ignored


@pytest.mark.parametrize(
    ("reported", "ending"),
    [
        pytest.param(False, NoToolSupport("openai/smollm2", "reported", window=WINDOW),
                     id="no-tools-and-small-window"),
        pytest.param(None, WINDOW, id="small-window-unsaid-tools"),
        pytest.param(True, WINDOW, id="small-window-with-tools"),
    ],
)
def test_a_small_window_beside_no_tools_names_both(reported: bool | None, ending: object) -> None:
    state, config = start()
    facts = TurnFacts(verdict=TurnVerdict.INTERRUPTED, window_too_small=WINDOW,
                      tools_reported=reported)
    _, decision = step_router(state, facts, config)
    assert decision == FinishWith(ending)  # type: ignore[arg-type]


def test_the_banner_of_no_tools_in_a_small_window_names_both_causes() -> None:
    ending = NoToolSupport("openai/smollm2", "reported", window=WINDOW)
    lines = banner_text(ending, []).splitlines()
    assert lines[0].startswith("I can't do this task with openai/smollm2: it does not take tools")
    assert lines[2] == NO_TOOLS_FIX
    clause = "this model's 2,048-token window cannot hold the tool definitions (about 1,500 tokens)"
    assert clause in lines[3] and "`-c 8192`" in lines[3]
    assert "continue" not in "\n".join(lines).lower()
    assert no_tools_blocker(ending) == (
        f"openai/smollm2 does not take tools (its server reports no tool support; and {clause})")
    assert len(banner_text(NoToolSupport("openai/smollm2", "reported"), []).splitlines()) == 3
