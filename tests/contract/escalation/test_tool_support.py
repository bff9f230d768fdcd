"""The tool-support decision: what a server reports and what it does, per provider."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.escalation.tool_support import (
    NoTools,
    TakesTools,
    ToolSupportDecision,
    ToolSupportObservation,
    ToolSupportState,
    lacks_tools,
    step_tool_support,
)


def obs(index: int = 0, reported: bool | None = None, *, forced: bool = False,
        called: bool = False, prose: bool = True) -> ToolSupportObservation:
    return ToolSupportObservation(index, reported, forced, called, prose)


def run(observations: list[ToolSupportObservation], chain: int = 1,
        limit: int = 2) -> tuple[ToolSupportState, ToolSupportDecision]:
    names = [f"m{n}" for n in range(chain)]
    config = MercuryConfig(model=names[0], fallbacks=tuple(names[1:]),
                           ignored_forcing_limit=limit)
    state, decision = ToolSupportState(), step_tool_support(ToolSupportState(), obs(), config)[1]
    for observation in observations:
        state, decision = step_tool_support(state, observation, config)
    return state, decision


@pytest.mark.parametrize(
    ("observations", "chain", "limit", "expected"),
    [
        pytest.param([obs(reported=False)], 1, 2, NoTools("reported"),
                     id="server-reports-no-tools"),
        pytest.param([obs(reported=True)], 1, 2, TakesTools(), id="server-reports-tools"),
        pytest.param([obs()], 1, 2, TakesTools(), id="unsaid-is-unknown"),
        pytest.param([obs(reported=False, called=True)], 1, 2, TakesTools(),
                     id="a-tool-call-beats-the-report"),
        pytest.param([obs(reported=False), obs(called=True)], 1, 2, TakesTools(),
                     id="a-later-tool-call-beats-the-report"),
        pytest.param([obs(forced=True)], 1, 2, TakesTools(), id="one-ignored-forcing"),
        pytest.param([obs(forced=True), obs(forced=True)], 1, 2, NoTools("observed", 2),
                     id="two-ignored-forcings"),
        pytest.param([obs(forced=True)], 1, 1, NoTools("observed", 1), id="limit-of-one"),
        pytest.param([obs(forced=True), obs(), obs(forced=True)], 1, 2, NoTools("observed", 2),
                     id="counted-across-rounds"),
        pytest.param([obs(forced=True), obs(forced=False), obs(forced=False)], 1, 2,
                     TakesTools(), id="degraded-auto-rounds-do-not-count"),
        pytest.param([obs(forced=True), obs(forced=True, prose=False)], 1, 2, TakesTools(),
                     id="a-cut-reply-is-no-ignored-forcing"),
        pytest.param([obs(forced=True), obs(forced=True, called=True), obs(forced=True)], 1, 2,
                     TakesTools(), id="a-forced-call-proves-tools"),
        pytest.param([obs(0, False), obs(1, forced=True)], 2, 2, TakesTools(),
                     id="chain-one-provider-may-take-tools"),
        pytest.param([obs(0, False), obs(1, forced=True), obs(1, forced=True)], 2, 2,
                     NoTools("reported", 2), id="chain-none-takes-tools-reported-wins"),
        pytest.param([obs(0, forced=True), obs(1, forced=True), obs(0, forced=True),
                      obs(1, forced=True)], 2, 2, NoTools("observed", 2),
                     id="chain-all-observed"),
        pytest.param([obs(0, False), obs(1, True)], 2, 2, TakesTools(),
                     id="chain-second-reports-tools"),
    ],
)
def test_tool_support_decision(
    observations: list[ToolSupportObservation], chain: int, limit: int,
    expected: ToolSupportDecision,
) -> None:
    _, decision = run(observations, chain, limit)
    assert decision == expected


def test_a_newer_report_replaces_the_older() -> None:
    state, _ = run([obs(reported=False), obs(reported=True)])
    assert state.reported_by(0) is True
    assert lacks_tools(state, 0, MercuryConfig()) is None


def test_counts_are_per_provider() -> None:
    state, _ = run([obs(0, forced=True), obs(1, forced=True), obs(1, forced=True)], chain=2)
    assert (state.ignored_by(0), state.ignored_by(1)) == (1, 2)
    config = MercuryConfig(model="m0", fallbacks=("m1",))
    assert lacks_tools(state, 0, config) is None
    assert lacks_tools(state, 1, config) == "observed"
