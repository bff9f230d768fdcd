"""Auto-continue after steps-exhausted, truncation resume rounds, output-limit halving."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.continuation import (
    AUTO_CONTINUE_NOTICE,
    AutoContinue,
    PauseStepBudget,
    PauseTruncated,
    ResumeTruncated,
    StepBudgetDecision,
    StepBudgetState,
    TruncationDecision,
    TruncationObservation,
    TruncationState,
    mentions_output_limit,
    next_max_tokens,
    on_steps_exhausted,
    on_truncated,
)

CONFIG = MercuryConfig()
NUDGE = (
    "[SYSTEM: STEP BUDGET] You reached the tool-step budget for this task. "
    "The task is NOT done — do not summarize or wrap up."
)


def run_steps_exhausted(task: str, config: MercuryConfig, times: int) -> list[StepBudgetDecision]:
    state, decisions = StepBudgetState(), []
    for _ in range(times):
        state, decision = on_steps_exhausted(state, task, config)
        decisions.append(decision)
    return decisions


def test_six_continuations_then_a_pause() -> None:
    decisions = run_steps_exhausted("Build the app", CONFIG, 8)
    continues = [d for d in decisions if isinstance(d, AutoContinue)]
    assert [d.number for d in continues] == [1, 2, 3, 4, 5, 6]
    assert decisions[:6] == continues
    assert decisions[6:] == [PauseStepBudget(continuations=6), PauseStepBudget(continuations=6)]


@pytest.mark.parametrize("bound", [pytest.param(0, id="none"), pytest.param(2, id="two")])
def test_continuation_bound_comes_from_config(bound: int) -> None:
    decisions = run_steps_exhausted("t", MercuryConfig(max_auto_continuations=bound), bound + 1)
    assert all(isinstance(d, AutoContinue) for d in decisions[:bound])
    assert decisions[bound] == PauseStepBudget(continuations=bound)


@pytest.mark.parametrize(
    ("task", "restated"),
    [
        pytest.param("Build the app", "Build the app", id="short"),
        pytest.param("  Build the app\n", "Build the app", id="stripped"),
        pytest.param("x" * 250, "x" * 200, id="cut-at-200"),
        pytest.param("é" * 201, "é" * 200, id="characters-not-bytes"),
    ],
)
def test_nudge_restates_the_task(task: str, restated: str) -> None:
    (decision,) = run_steps_exhausted(task, CONFIG, 1)
    assert isinstance(decision, AutoContinue)
    assert decision.nudge == f'{NUDGE}\nThe task remains: "{restated}"'
    assert decision.notice == AUTO_CONTINUE_NOTICE


def test_restated_length_comes_from_config() -> None:
    (decision,) = run_steps_exhausted("abcdefghij" * 5, MercuryConfig(task_restate_chars=25), 1)
    assert isinstance(decision, AutoContinue)
    assert decision.nudge.endswith('"abcdefghijabcdefghijabcde"')


def test_auto_continue_notice_is_exact() -> None:
    assert AUTO_CONTINUE_NOTICE == (
        "This one's a bigger build than a single pass — picking up right where I left off…"
    )


def run_truncated(obs: TruncationObservation, times: int) -> list[TruncationDecision]:
    state, decisions = TruncationState(), []
    for _ in range(times):
        state, decision = on_truncated(state, obs, CONFIG)
        decisions.append(decision)
    return decisions


def test_six_resume_rounds_then_a_pause_for_cut_writes() -> None:
    decisions = run_truncated(TruncationObservation(cut_write=True), 7)
    assert [d.round for d in decisions if isinstance(d, ResumeTruncated)] == [1, 2, 3, 4, 5, 6]
    assert decisions[6] == PauseTruncated(rounds=6)


STEP_PROMPT = (
    "[SYSTEM] Your previous response hit the output-token limit and was cut off… Do not "
    "continue it and do not repeat it. Take the next step of the task now with a tool call, "
    "or, if the work is done and verified, finish with a summary of a few sentences."
)


@pytest.mark.parametrize(
    ("obs", "expected"),
    [
        pytest.param(TruncationObservation(False), STEP_PROMPT, id="work-prose"),
        pytest.param(TruncationObservation(False, reply_cap=512), STEP_PROMPT,
                     id="work-prose-cap-unused"),
        pytest.param(
            TruncationObservation(False, answering=True, reply_cap=512),
            "[SYSTEM] Your previous response hit the output-token limit and was cut off… Do "
            "not continue it. Answer again from the start, shorter and complete, within 256 "
            "tokens (about 192 words).",
            id="answer-half-the-cap",
        ),
        pytest.param(
            TruncationObservation(False, answering=True),
            "[SYSTEM] Your previous response hit the output-token limit and was cut off… Do "
            "not continue it. Answer again from the start, shorter and complete, within 2,048 "
            "tokens (about 1,536 words).",
            id="answer-cap-unknown-half-the-reply-max",
        ),
    ],
)
def test_cut_prose_is_never_asked_to_go_on(obs: TruncationObservation, expected: str) -> None:
    (decision,) = run_truncated(obs, 1)
    assert isinstance(decision, ResumeTruncated)
    assert decision.prompt == expected
    assert len(decision.prompt) < 400
    assert "Continue exactly" not in decision.prompt and "WRITE TRUNCATED" not in decision.prompt


@pytest.mark.parametrize(
    ("sequence", "changes", "expected"),
    [
        pytest.param("P", {}, ["resume"], id="one-prose-cut-retried"),
        pytest.param("PP", {}, ["resume", "pause"], id="repeated-prose-pauses"),
        pytest.param("PWP", {}, ["resume", "resume", "pause"], id="writes-do-not-reset-prose"),
        pytest.param("WWP", {}, ["resume", "resume", "resume"], id="writes-then-prose"),
        pytest.param("PWW", {}, ["resume", "resume", "resume"], id="writes-go-on-after-prose"),
        pytest.param("PPP", {"max_prose_truncation_rounds": 2}, ["resume", "resume", "pause"],
                     id="prose-rounds-configured"),
        pytest.param("P", {"max_prose_truncation_rounds": 0}, ["pause"], id="no-prose-rounds"),
        pytest.param("WP", {"max_truncation_rounds": 1}, ["resume", "pause"],
                     id="all-rounds-bound-prose-too"),
    ],
)
def test_repeated_cut_prose_ends_in_the_truncation_pause(
    sequence: str, changes: dict[str, int], expected: list[str]
) -> None:
    config, state, seen = MercuryConfig(**changes), TruncationState(), []
    for kind in sequence:
        state, decision = on_truncated(state, TruncationObservation(kind == "W"), config)
        seen.append("resume" if isinstance(decision, ResumeTruncated) else "pause")
        if isinstance(decision, PauseTruncated):
            assert decision.rounds == state.rounds
    assert seen == expected


@pytest.mark.parametrize(
    ("obs", "lines", "named"),
    [
        pytest.param(TruncationObservation(True), 80, None, id="default-80"),
        pytest.param(TruncationObservation(True, path="src/big.py"), 80, "src/big.py", id="path"),
    ],
)
def test_cut_write_demands_sectioned_writes(
    obs: TruncationObservation, lines: int, named: str | None
) -> None:
    (decision,) = run_truncated(obs, 1)
    assert isinstance(decision, ResumeTruncated)
    prompt = decision.prompt
    assert prompt.startswith(
        "[SYSTEM: WRITE TRUNCATED] Your file write was cut off… the file was NOT written. "
        "Do NOT retry the same giant write."
    )
    assert f"create_file with about the first {lines} lines" in prompt
    assert "edit_file with an empty old_text to append" in prompt
    assert f"about {lines} lines each" in prompt
    assert (named is not None) == ("src/big.py" in prompt)


def test_section_size_comes_from_config() -> None:
    config = MercuryConfig(sectioned_write_lines=40)
    _, decision = on_truncated(TruncationState(), TruncationObservation(True), config)
    assert isinstance(decision, ResumeTruncated)
    assert "about the first 40 lines" in decision.prompt


@pytest.mark.parametrize(
    ("error", "about_output"),
    [
        pytest.param(
            "max_tokens: 32768 > 8192, which is the maximum allowed", True, id="max_tokens"
        ),
        pytest.param("Unsupported value for MAX_COMPLETION_TOKENS", True, id="upper-case"),
        pytest.param("max tokens is too large: 32768", True, id="too-large"),
        pytest.param("requested output limit not supported", True, id="output-limit"),
        pytest.param("This exceeds the output token limit", True, id="exceeds"),
        pytest.param("maximum context length exceeded", True, id="exceeded"),
        pytest.param("maxOutputTokens must be at most 8192", True, id="camel-case"),
        pytest.param("Rate limit exceeded, retry in 20s", False, id="rate-limit"),
        pytest.param("You exceeded your current quota", False, id="quota"),
        pytest.param("Invalid API key", False, id="auth"),
        pytest.param("the max_tokensX field", False, id="not-a-whole-word"),
        pytest.param("output_limitless mode", False, id="no-limit-word"),
        pytest.param("", False, id="empty"),
    ],
)
def test_mentions_output_limit(error: str, about_output: bool) -> None:
    assert mentions_output_limit(error) is about_output


@pytest.mark.parametrize(
    ("current", "error", "expected"),
    [
        pytest.param(32768, "max_tokens too large", 16384, id="halve"),
        pytest.param(16384, "max_tokens too large", 8192, id="halve-again"),
        pytest.param(8192, "max_tokens too large", 4096, id="reach-floor"),
        pytest.param(6000, "max_tokens too large", 4096, id="clamp-to-floor"),
        pytest.param(4096, "max_tokens too large", None, id="at-floor"),
        pytest.param(32768, "Invalid API key", None, id="other-error"),
    ],
)
def test_next_max_tokens(current: int, error: str, expected: int | None) -> None:
    assert next_max_tokens(current, error, CONFIG.min_output_tokens) == expected


def test_halving_sequence_stops_at_the_floor() -> None:
    seen, current = [], CONFIG.max_output_tokens
    while (smaller := next_max_tokens(current, "max_tokens", CONFIG.min_output_tokens)) is not None:
        seen.append(smaller)
        current = smaller
    assert seen == [16384, 8192, 4096]
