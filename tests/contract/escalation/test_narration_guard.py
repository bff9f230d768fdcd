"""Table tests of the narration guard: trigger, rotation, wake-up, pause, forced-choice degrade."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.escalation.guard_texts import (
    FORCED_CHOICE_FALLBACK_DIRECTIVE,
    FORCED_ROUND_DIRECTIVE,
    NO_CHANGE_OFFER_DIRECTIVE,
    NO_CHANGE_OFFER_NOTICE,
    SECOND_CYCLE_NOTICE,
    asks_user,
    forced_choice_rejected,
    format_grounding,
)
from mercury_nb.contract.escalation.narration_guard import (
    FailedMutation,
    GuardIdle,
    GuardObservation,
    GuardSatisfied,
    GuardState,
    PauseWorkNotStarted,
    RunGuardRound,
    degrade_forced_round,
    forced_step_failed,
    step_guard,
)
from mercury_nb.contract.turns.turn_verdict import TurnVerdict
from mercury_nb.contract.vocabulary import MUTATING_TOOLS

WAKE_UP_TAIL = (
    "Your next response MUST begin with a mutating tool call — create_file, write_file, "
    "edit_file, or run_command. ZERO prose before the call."
)
NARRATION = "Building the app now. I will create the files and run the tests."


def make_config(*chain: str, **changes: object) -> MercuryConfig:
    names = chain or ("a", "b", "c")
    return MercuryConfig(model=names[0], fallbacks=names[1:]).with_changes(**changes)


def narrated(
    provider: int = 0,
    text: str = NARRATION,
    failed: FailedMutation | None = None,
    verdict: TurnVerdict = TurnVerdict.TEXT_STOP,
    mutated: bool = False,
) -> GuardObservation:
    return GuardObservation(
        verdict=verdict,
        mutated=mutated,
        reply_text=text,
        provider_index=provider,
        last_failed_mutation=failed,
    )


def run_rounds(
    config: MercuryConfig, served_by: int, failed_rounds: int
) -> tuple[list[RunGuardRound], GuardState, object]:
    """Start the guard on a narrating turn, then fail ``failed_rounds`` rounds, each served by
    the provider the guard asked for. Returns the rounds, the state and the last decision."""
    state, decision = step_guard(GuardState(), narrated(served_by), config)
    rounds: list[RunGuardRound] = []
    for _ in range(failed_rounds):
        assert isinstance(decision, RunGuardRound)
        rounds.append(decision)
        state, decision = step_guard(state, narrated(decision.provider_index), config)
    return rounds, state, decision


# --- trigger ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obs", "mode", "starts"),
    [
        pytest.param(narrated(), "execute", True, id="execute-narration-starts"),
        pytest.param(narrated(), "chat", False, id="chat-mode-never-starts"),
        pytest.param(narrated(mutated=True), "execute", False, id="work-landed"),
        pytest.param(
            narrated(text="I planned it. Should I use SQLite or Postgres?"),
            "execute",
            False,
            id="ends-by-asking-user",
        ),
        pytest.param(
            narrated(text="What's the latest? Let me add the address field."),
            "execute",
            True,
            id="question-not-at-end-starts",
        ),
        pytest.param(
            narrated(verdict=TurnVerdict.STEPS_EXHAUSTED), "execute", False, id="steps-exhausted"
        ),
        pytest.param(narrated(verdict=TurnVerdict.TRUNCATED), "execute", False, id="truncated"),
        pytest.param(narrated(verdict=TurnVerdict.INTERRUPTED), "execute", False, id="interrupted"),
        pytest.param(narrated(verdict=TurnVerdict.ABORTED), "execute", False, id="aborted"),
    ],
)
def test_trigger(obs: GuardObservation, mode: str, starts: bool) -> None:
    state, decision = step_guard(GuardState(), obs, make_config(mode=mode))
    assert isinstance(decision, RunGuardRound) is starts
    assert state.active is starts
    if not starts:
        assert decision == GuardIdle()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Want me to add tests too?", True, id="plain-question"),
        pytest.param("Done planning.\n\nShould I proceed?  \n", True, id="trailing-whitespace"),
        pytest.param("Which database do you prefer?**", True, id="markdown-emphasis"),
        pytest.param('You said "go ahead?"', True, id="closing-quote"),
        pytest.param("Shall I start? 🙂", True, id="trailing-emoji"),
        pytest.param("Shall I start (or wait?)", True, id="closing-paren"),
        pytest.param("Any preference？", True, id="fullwidth-question-mark"),
        pytest.param("Want me to add tests? I'll start with the parser.", False, id="q-not-last"),
        pytest.param("I'll ask the user later and test it.", False, id="substring-ask-test"),
        pytest.param("Show me the latest address list.", False, id="substring-latest-address"),
        pytest.param("Run this:\n```\nready?\n```", False, id="ends-in-code-block"),
        pytest.param("Check `ready?`", False, id="inline-code-question"),
        pytest.param("", False, id="empty"),
        pytest.param("  \n ", False, id="blank"),
        pytest.param("Building X…", False, id="narration"),
    ],
)
def test_asks_user(text: str, expected: bool) -> None:
    assert asks_user(text) is expected


# --- rotation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chain", "served_by", "expected"),
    [
        pytest.param(("a", "b", "c"), 0, [0, 1, 2, 0, 1, 2, 0, 1, 2, 0], id="served-by-a"),
        pytest.param(("a", "b", "c"), 1, [1, 2, 0, 1, 2, 0, 1, 2, 0, 1], id="served-by-b-not-a"),
        pytest.param(("a", "b", "c"), 2, [2, 0, 1, 2, 0, 1, 2, 0, 1, 2], id="served-by-c-wraps"),
        pytest.param(("a",), 0, [0] * 10, id="single-provider"),
    ],
)
def test_rotation_starts_at_serving_provider(
    chain: tuple[str, ...], served_by: int, expected: list[int]
) -> None:
    rounds, _, _ = run_rounds(make_config(*chain), served_by, failed_rounds=10)
    assert [r.provider_index for r in rounds] == expected


def test_rotation_follows_the_provider_that_actually_served_a_round() -> None:
    config = make_config("a", "b", "c")
    state, first = step_guard(GuardState(), narrated(0), config)
    assert isinstance(first, RunGuardRound) and first.provider_index == 0
    # Provider a failed during round 1 and the fallback chain moved to b, which narrated.
    state, second = step_guard(state, narrated(1), config)
    assert isinstance(second, RunGuardRound)
    assert (second.round, second.provider_index) == (2, 2)


# --- escalation: notices, grounding, wake-up, pause --------------------------------------


def test_ten_rounds_then_pause() -> None:
    config = make_config()
    rounds, state, last = run_rounds(config, served_by=0, failed_rounds=10)
    assert [r.round for r in rounds] == list(range(1, 11))
    assert [r.notice for r in rounds[:5]] == [
        f"Alright — getting started on the real build now (attempt {n} of 5)…" for n in range(1, 6)
    ]
    assert [r.notice for r in rounds[5:]] == [SECOND_CYCLE_NOTICE] * 5
    assert (
        SECOND_CYCLE_NOTICE == "Taking a completely different run at this — forcing the first move…"
    )
    assert [r.grounding for r in rounds] == [True] + [False] * 4 + [True] + [False] * 4
    assert [r.wake_up for r in rounds] == [False] * 5 + [True] + [False] * 4
    assert all(r.forced and r.tool_choice == "required" for r in rounds)
    assert all(r.tools is None for r in rounds)  # every tool: the prompt prefix stays the same
    assert last == PauseWorkNotStarted(blocker=None, rounds=10, failure=None)
    assert state == GuardState()


def test_wake_up_text() -> None:
    rounds, _, _ = run_rounds(make_config(), served_by=0, failed_rounds=6)
    wake = rounds[5].directive
    assert wake.startswith("[SYSTEM: WAKE-UP CALL] ")
    assert wake.endswith(WAKE_UP_TAIL)
    assert all("WAKE-UP" not in r.directive for r in rounds[:5])


def test_mutating_tools_are_the_issue_list() -> None:
    assert set(MUTATING_TOOLS) == {
        "create_file",
        "write_file",
        "edit_file",
        "delete_file",
        "run_command",
        "edit_notebook_cell",
        "insert_notebook_cell",
        "delete_notebook_cell",
        "run_in_kernel",
        "run_cells",  # writes its outputs into the notebook
        "run_cells_in_kernel",  # runs the notebook's cells in the user's kernel
    }


@pytest.mark.parametrize(
    ("rounds", "total", "wake_up_round", "pause_after"),
    [
        pytest.param(2, 3, 3, 3, id="short-bounds"),
        pytest.param(3, 3, None, 3, id="no-second-cycle"),
        pytest.param(5, 10, 6, 10, id="defaults"),
    ],
)
def test_bounds_come_from_config(
    rounds: int, total: int, wake_up_round: int | None, pause_after: int
) -> None:
    config = make_config(guard_rounds=rounds, guard_rounds_total=total)
    ran, _, last = run_rounds(config, served_by=0, failed_rounds=pause_after)
    assert [r.round for r in ran if r.wake_up] == ([wake_up_round] if wake_up_round else [])
    assert isinstance(last, PauseWorkNotStarted)
    assert ran[0].notice.endswith(f"(attempt 1 of {rounds})…")


@pytest.mark.parametrize(
    ("failures", "expected"),
    [
        pytest.param({}, None, id="no-failed-mutation"),
        pytest.param(
            {3: FailedMutation("write_file", "Permission denied: app.py")},
            "write_file: Permission denied: app.py",
            id="one-failure",
        ),
        pytest.param(
            {
                2: FailedMutation("create_file", "exists"),
                7: FailedMutation("run_command", "exit 127: npm: not found"),
            },
            "run_command: exit 127: npm: not found",
            id="last-failure-wins",
        ),
        pytest.param(
            {9: FailedMutation("edit_file", "x" * 300)},
            "edit_file: " + "x" * 120,
            id="result-cut-to-120",
        ),
        pytest.param(
            {1: FailedMutation("run_command", "line one\n  line two")},
            "run_command: line one line two",
            id="one-line",
        ),
    ],
)
def test_pause_names_last_failed_mutation(
    failures: dict[int, FailedMutation], expected: str | None
) -> None:
    config = make_config()
    state, decision = step_guard(GuardState(), narrated(0, failed=failures.get(0)), config)
    for number in range(1, 11):
        assert isinstance(decision, RunGuardRound)
        obs = narrated(decision.provider_index, failed=failures.get(number))
        state, decision = step_guard(state, obs, config)
    assert isinstance(decision, PauseWorkNotStarted)
    assert (decision.blocker, decision.rounds) == (expected, 10)
    last = [failures[k] for k in sorted(failures)]
    assert decision.failure == (last[-1] if last else None)


@pytest.mark.parametrize(
    ("obs", "expected"),
    [
        pytest.param(narrated(1, mutated=True), GuardSatisfied("mutation"), id="mutation"),
        pytest.param(
            narrated(1, verdict=TurnVerdict.STEPS_EXHAUSTED, mutated=True),
            GuardSatisfied("mutation"),
            id="mutation-then-budget",
        ),
        pytest.param(narrated(1, verdict=TurnVerdict.ABORTED), GuardIdle(), id="aborted"),
    ],
)
def test_round_ends_guard(obs: GuardObservation, expected: object) -> None:
    config = make_config()
    _, state, _ = run_rounds(config, served_by=0, failed_rounds=3)
    assert state.round == 4
    state, decision = step_guard(state, obs, config)
    assert decision == expected
    assert state == GuardState()


@pytest.mark.parametrize(
    "obs",
    [
        pytest.param(narrated(1, text="npm is missing. Should I install it?"), id="prose-question"),
        pytest.param(narrated(1, text="I'm sorry, but I cannot call functions."),
                     id="prose-blocker"),
        pytest.param(narrated(1, text="```python\n# create_file(", verdict=TurnVerdict.TRUNCATED),
                     id="prose-cut-by-length"),
    ],
)
def test_a_round_answered_in_prose_fails_it(obs: GuardObservation) -> None:
    """Only a typed finish (read by the router) ends a round without a mutation."""
    config = make_config()
    _, state, _ = run_rounds(config, served_by=0, failed_rounds=3)
    state, decision = step_guard(state, obs, config)
    assert isinstance(decision, RunGuardRound)
    assert (decision.round, decision.provider_index, decision.forced) == (5, 2, True)


@pytest.mark.parametrize(
    ("lacks_tools", "starts"),
    [pytest.param(False, False, id="tools-question-holds-it-off"),
     pytest.param(True, True, id="no-tools-question-starts-it")],
)
def test_a_closing_question_starts_the_guard_only_on_a_provider_without_tools(
    lacks_tools: bool, starts: bool
) -> None:
    obs = GuardObservation(TurnVerdict.TEXT_STOP, False, "What should it say?", 0,
                           lacks_tools=lacks_tools)
    _, decision = step_guard(GuardState(), obs, make_config())
    assert isinstance(decision, RunGuardRound) is starts


@pytest.mark.parametrize(
    ("must_mutate", "first", "calls", "mutating", "failed"),
    [
        pytest.param(True, True, 1, 0, True, id="forced-read-only"),
        pytest.param(True, True, 2, 1, False, id="forced-with-a-mutation"),
        pytest.param(True, True, 0, 0, False, id="forced-prose"),
        pytest.param(True, False, 1, 0, False, id="later-step"),
        pytest.param(False, True, 1, 0, False, id="not-a-guard-round"),
    ],
)
def test_forced_step_failed(
    must_mutate: bool, first: bool, calls: int, mutating: int, failed: bool
) -> None:
    assert forced_step_failed(must_mutate, first, calls, mutating) is failed


def test_failed_round_without_text_stop_still_counts() -> None:
    config = make_config()
    state, _ = step_guard(GuardState(), narrated(0), config)
    state, decision = step_guard(state, narrated(0, verdict=TurnVerdict.STEPS_EXHAUSTED), config)
    assert isinstance(decision, RunGuardRound) and decision.round == 2


# --- forced-choice rejection ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "text", "expected"),
    [
        pytest.param(400, "tool_choice 'required' is not supported", True, id="tool-choice"),
        pytest.param(400, "Thinking may not be enabled with forced tool use", True, id="thinking"),
        pytest.param(400, "value 'required' invalid for this model", True, id="required"),
        pytest.param(400, "Tool choice must be auto", True, id="tool-choice-spaced"),
        pytest.param(400, "max_tokens is too large", False, id="other-400"),
        pytest.param(500, "tool_choice failed", False, id="not-400"),
        pytest.param(None, "tool_choice", False, id="no-status"),
        pytest.param(400, "the field is requiredness", False, id="required-substring"),
    ],
)
def test_forced_choice_rejected(status: int | None, text: str, expected: bool) -> None:
    assert forced_choice_rejected(status, text) is expected


def test_degrade_keeps_round_and_tools_and_remembers_provider() -> None:
    config = make_config("a", "b")
    state, first = step_guard(GuardState(), narrated(0), config)
    assert isinstance(first, RunGuardRound)
    state, retry = degrade_forced_round(state, first)
    assert (retry.round, retry.provider_index, retry.grounding) == (1, 0, True)
    assert (retry.forced, retry.tool_choice, retry.tools) == (False, "auto", None)
    assert retry.directive.startswith(first.directive)
    assert retry.directive.endswith(FORCED_CHOICE_FALLBACK_DIRECTIVE)
    # Round 2 goes to b, still forced; round 3 comes back to a, degraded from the start.
    state, second = step_guard(state, narrated(0), config)
    assert isinstance(second, RunGuardRound)
    assert (second.provider_index, second.forced) == (1, True)
    state, third = step_guard(state, narrated(1), config)
    assert isinstance(third, RunGuardRound)
    assert (third.provider_index, third.forced, third.tool_choice) == (0, False, "auto")
    assert third.directive.endswith(FORCED_CHOICE_FALLBACK_DIRECTIVE)


# --- the typed "no change needed" offer ------------------------------------------------


def _offering(provider: int = 0) -> GuardObservation:
    return GuardObservation(verdict=TurnVerdict.TEXT_STOP, mutated=False,
                            reply_text="notes/q3.md mentions it.", provider_index=provider,
                            offer_no_change=True)


def test_an_unclear_task_s_first_round_offers_no_change_then_forces_as_ever() -> None:
    config = make_config("a", "b")
    state, first = step_guard(GuardState(), _offering(), config)
    assert isinstance(first, RunGuardRound)
    assert (first.round, first.grounding, first.offer_no_change) == (1, True, True)
    assert (first.forced, first.tool_choice, first.must_mutate) == (True, "required", False)
    assert (first.directive, first.notice) == (NO_CHANGE_OFFER_DIRECTIVE, NO_CHANGE_OFFER_NOTICE)
    assert "finish" in first.directive and "no_change" in first.directive
    # the offer is made once: round 2 forces a mutation like any round
    state, second = step_guard(state, _offering(0), config)
    assert isinstance(second, RunGuardRound)
    assert (second.round, second.offer_no_change, second.must_mutate) == (2, False, True)
    assert second.directive == FORCED_ROUND_DIRECTIVE


def test_without_the_offer_the_first_round_forces_a_mutation() -> None:
    _, first = step_guard(GuardState(), narrated(0), make_config())
    assert isinstance(first, RunGuardRound)
    assert (first.offer_no_change, first.must_mutate) == (False, True)
    assert first.directive == FORCED_ROUND_DIRECTIVE


def test_a_degraded_offered_round_keeps_its_offer_without_the_mutation_rule() -> None:
    state, first = step_guard(GuardState(), _offering(), make_config("a"))
    assert isinstance(first, RunGuardRound)
    _, retry = degrade_forced_round(state, first)
    assert (retry.forced, retry.tool_choice, retry.offer_no_change) == (False, "auto", True)
    assert retry.directive == NO_CHANGE_OFFER_DIRECTIVE


# --- grounding --------------------------------------------------------------------------


HEADER = "[SYSTEM: GROUNDING — agent-executed, not model-generated] Current working directory: "


@pytest.mark.parametrize(
    ("entries", "limit", "expected_lines"),
    [
        pytest.param(
            [("src", True), ("README.md", False)],
            30,
            ["dir: src", "file: README.md"],
            id="dirs-and-files",
        ),
        pytest.param([], 30, ["(the directory is empty)"], id="empty"),
        pytest.param(
            [(f"f{i}.py", False) for i in range(35)],
            30,
            [f"file: f{i}.py" for i in range(30)] + ["… and 5 more entries"],
            id="first-30-of-35",
        ),
        pytest.param(
            [(f"f{i}", False) for i in range(30)],
            30,
            [f"file: f{i}" for i in range(30)],
            id="exactly-30",
        ),
    ],
)
def test_format_grounding(
    entries: list[tuple[str, bool]], limit: int, expected_lines: list[str]
) -> None:
    text = format_grounding("/work/proj", entries, limit)
    assert text.split("\n") == [HEADER + "/work/proj", *expected_lines]
