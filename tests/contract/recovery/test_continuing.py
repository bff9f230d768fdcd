"""A non-resumable ending may be continued only when the settings that caused it changed."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    BlockedPause,
    Ending,
    NoChangesCompletion,
    NoToolSupport,
    ProviderAttempt,
    ProviderFailure,
    StepBudgetPause,
    WindowTooSmall,
    resumable,
)
from mercury_nb.contract.recovery.continuing import (
    ENDPOINT,
    WINDOW,
    RunSettings,
    Setting,
    cause_of,
    cured_by,
    current_fixes,
    may_continue,
    recorded_cause,
)

RAN = RunSettings(("openai/smollm2",), "http://127.0.0.1:8080/v1", "full", None)
NO_TOOLS = NoToolSupport("openai/smollm2", "reported")
TOO_SMALL = WindowTooSmall(2048, 1536, 512, 256, 1525, False, compact_tokens=808)
REFUSED = ProviderFailure("HTTP 401", (ProviderAttempt("openai/smollm2", "HTTP 401", True),))
OVERLOADED = ProviderFailure("HTTP 503", (ProviderAttempt("openai/smollm2", "HTTP 503"),))


@pytest.mark.parametrize(
    ("ending", "cures"),
    [
        pytest.param(NO_TOOLS, ENDPOINT, id="no-tools: another model or endpoint"),
        pytest.param(REFUSED, ENDPOINT, id="refused: another model or endpoint"),
        pytest.param(TOO_SMALL, WINDOW, id="window: also the tool set or the window"),
        pytest.param(OVERLOADED, (), id="overloaded: resumable, nothing to cure"),
        pytest.param(StepBudgetPause(3), (), id="a pause"),
        pytest.param(BlockedPause("no network"), (), id="a blocked pause"),
        pytest.param(NoChangesCompletion("git"), (), id="a completion: nothing cures it"),
    ],
)
def test_cured_by(ending: Ending, cures: tuple[Setting, ...]) -> None:
    assert cured_by(ending) == cures
    assert not (cures and resumable(ending))  # only a non-resumable ending names cures


@pytest.mark.parametrize(
    ("ending", "after", "allowed"),
    [
        pytest.param(NO_TOOLS, RAN, False, id="no-tools, same settings"),
        pytest.param(NO_TOOLS, replace(RAN, models=("openai/qwen2.5-7b",)), True,
                     id="no-tools, --model another"),
        pytest.param(NO_TOOLS, replace(RAN, models=("openai/smollm2", "openai/qwen")), True,
                     id="no-tools, --fallback another"),
        pytest.param(NO_TOOLS, replace(RAN, api_base="http://127.0.0.1:8081/v1"), True,
                     id="no-tools, another server (--jinja)"),
        pytest.param(NO_TOOLS, replace(RAN, tool_set="compact"), False,
                     id="no-tools, compact tools do not add tool support"),
        pytest.param(REFUSED, RAN, False, id="refused, same settings"),
        pytest.param(REFUSED, replace(RAN, models=("openai/other",)), True,
                     id="refused, another model"),
        pytest.param(TOO_SMALL, RAN, False, id="window, same settings"),
        pytest.param(TOO_SMALL, replace(RAN, tool_set="compact"), True,
                     id="window, MERCURY_TOOL_SET=compact"),
        pytest.param(TOO_SMALL, replace(RAN, context_window=8192), True,
                     id="window, MERCURY_CONTEXT_WINDOW"),
        pytest.param(TOO_SMALL, replace(RAN, models=("openai/bigger",)), True,
                     id="window, another model"),
        pytest.param(OVERLOADED, RAN, True, id="overloaded, same settings: resumable"),
        pytest.param(StepBudgetPause(3), RAN, True, id="a pause, same settings"),
        pytest.param(NoChangesCompletion("git"), replace(RAN, models=("openai/x",)), False,
                     id="a completion, another model"),
    ],
)
def test_may_continue(ending: Ending, after: RunSettings, allowed: bool) -> None:
    assert may_continue(resumable(ending), cured_by(ending), RAN, after) is allowed


def test_the_same_model_named_again_changes_nothing() -> None:
    again = RunSettings.of(MercuryConfig(model="openai/smollm2",
                                         api_base="http://127.0.0.1:8080/v1"))
    assert again == RAN
    assert not may_continue(False, ENDPOINT, RAN, again)


@pytest.mark.parametrize(
    ("cures", "current", "fixes"),
    [
        pytest.param(WINDOW, replace(RAN, tool_set="compact"), {"tool_set": "compact"},
                     id="window: the environment's compact tool set"),
        pytest.param(WINDOW, replace(RAN, context_window=8192), {"context_window": 8192},
                     id="window: the environment's window"),
        pytest.param(WINDOW, replace(RAN, models=("openai/other",)), {},
                     id="the current default model is no fix (only --model is)"),
        pytest.param(ENDPOINT, replace(RAN, tool_set="compact"), {},
                     id="no-tools: a tool set cures nothing"),
        pytest.param(WINDOW, RAN, {}, id="nothing changed"),
    ],
)
def test_current_fixes(cures: tuple[Setting, ...], current: RunSettings,
                       fixes: dict[str, object]) -> None:
    assert current_fixes(cures, RAN, current) == fixes


def test_the_ledger_keeps_the_cause_and_reads_it_back() -> None:
    cause = cause_of(TOO_SMALL, RAN)
    assert cause == {"models": ["openai/smollm2"], "api_base": "http://127.0.0.1:8080/v1",
                     "tool_set": "full", "context_window": None}
    elsewhere = RunSettings(("openai/other",), None, "compact", 4096)  # the checkpoint's
    assert recorded_cause(json.loads(json.dumps(cause)), elsewhere) == (WINDOW, RAN)
    assert cause_of(OVERLOADED, RAN) == {} and cause_of(StepBudgetPause(3), RAN) == {}


def test_a_record_without_a_cause_is_cured_by_another_model() -> None:
    assert recorded_cause({}, RAN) == (ENDPOINT, RAN)
