"""The sub-agent supervisor's decisions: resume budget pauses up to the limit, report the rest."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    Aborted,
    BlockedPause,
    Blocker,
    Ending,
    Failed,
    FilesMissingPause,
    NoChangesCompletion,
    Paused,
    ProviderFailure,
    QuestionPause,
    StepBudgetPause,
    TruncationPause,
    VerificationFailedPause,
    VerifiedCompletion,
    WorkNotStartedPause,
)
from mercury_nb.contract.gate.verification import CheckRecord, ReadBack, Verified
from mercury_nb.contract.recovery.subagent_supervisor import (
    ReportToParent,
    ResumeSub,
    SubOutcome,
    SupervisorDecision,
    SupervisorState,
    step_supervisor,
    why_not_done,
)

CONFIG = MercuryConfig()
PASSED = Verified(CheckRecord("python -m pytest -q", 0, seq=3))
FAILED_CHECK = CheckRecord("python -m pytest -q", 1, seq=3)
RESUME_FIRST_LINE = (
    "[SYSTEM: RESUMED] This task paused — its step budget ran out — and the supervisor gave "
    "you a fresh step budget. The task is NOT done: pick up exactly where you left off; do "
    "not start over and do not summarize."
)


def decide(
    ending: Ending, resumes: int = 0, config: MercuryConfig = CONFIG, task: str = "Build it"
) -> tuple[SupervisorState, SupervisorDecision]:
    return step_supervisor(SupervisorState(resumes), SubOutcome(task, ending), config)


@pytest.mark.parametrize(
    ("ending", "resumes", "expected"),
    [
        pytest.param(StepBudgetPause(6), 0, "resume", id="step-budget-first-pause"),
        pytest.param(StepBudgetPause(6), 2, "resume", id="step-budget-third-pause"),
        pytest.param(StepBudgetPause(6), 3, "paused", id="step-budget-resumes-used-up"),
        pytest.param(TruncationPause(6), 0, "resume", id="truncation"),
        pytest.param(TruncationPause(6), 3, "paused", id="truncation-resumes-used-up"),
        pytest.param(VerificationFailedPause(FAILED_CHECK, False), 0, "paused",
                     id="failed-check-goes-to-parent"),
        pytest.param(WorkNotStartedPause(None), 0, "paused", id="work-not-started-goes-to-parent"),
        pytest.param(Paused("I got stuck in a loop"), 0, "paused", id="doom-loop-goes-to-parent"),
        pytest.param(VerifiedCompletion(PASSED), 0, "completed", id="verified"),
        pytest.param(VerifiedCompletion(ReadBack(("notes.md",))), 1, "completed", id="read-back"),
        pytest.param(NoChangesCompletion("git"), 0, "completed", id="no-changes"),
        pytest.param(ProviderFailure("boom"), 0, "failed", id="providers-failed"),
        pytest.param(Failed("no model"), 0, "failed", id="failed"),
        pytest.param(Aborted(), 0, "aborted", id="aborted"),
    ],
)
def test_decision_table(ending: Ending, resumes: int, expected: str) -> None:
    state, decision = decide(ending, resumes)
    if expected == "resume":
        assert isinstance(decision, ResumeSub)
        assert decision.number == resumes + 1
        assert state == SupervisorState(resumes + 1)
    else:
        assert decision == ReportToParent(ending, resumes, why_not_done(ending))
        assert decision.status == expected
        assert state == SupervisorState(resumes)


def test_three_resumes_then_an_honest_pause() -> None:
    state, decisions = SupervisorState(), []
    for _ in range(5):
        state, decision = step_supervisor(state, SubOutcome("Build it", StepBudgetPause(6)), CONFIG)
        decisions.append(decision)
        if isinstance(decision, ReportToParent):
            break
    assert [d.number for d in decisions if isinstance(d, ResumeSub)] == [1, 2, 3]
    assert decisions[3] == ReportToParent(StepBudgetPause(6), 3, "its step budget ran out")
    assert decisions[3].status == "paused"
    assert len(decisions) == 4


@pytest.mark.parametrize("limit", [pytest.param(0, id="none"), pytest.param(1, id="one")])
def test_resume_limit_comes_from_config(limit: int) -> None:
    config = MercuryConfig(subagent_max_resumes=limit)
    _, first = decide(StepBudgetPause(0), limit, config)
    assert isinstance(first, ReportToParent) and first.status == "paused"
    if limit:
        _, earlier = decide(StepBudgetPause(0), limit - 1, config)
        assert isinstance(earlier, ResumeSub) and earlier.notice.endswith(f"({limit} of {limit})…")


def test_resume_nudge_and_notice_name_why_and_restate_the_task() -> None:
    _, decision = decide(StepBudgetPause(6), 1, task="  Write calc.py " + "x" * 300)
    assert isinstance(decision, ResumeSub)
    first, second = decision.nudge.split("\n")
    assert first == RESUME_FIRST_LINE
    assert second == 'The task remains: "' + ("Write calc.py " + "x" * 300)[:200] + '"'
    assert decision.notice == (
        "paused because its step budget ran out — resuming automatically (2 of 3)…"
    )


@pytest.mark.parametrize(
    ("ending", "why"),
    [
        pytest.param(StepBudgetPause(6), "its step budget ran out", id="step-budget"),
        pytest.param(TruncationPause(2), "its replies kept hitting the output-token limit",
                     id="truncation"),
        pytest.param(VerificationFailedPause(FAILED_CHECK, False),
                     "its changes are in, but the last check didn't pass", id="check-failed"),
        pytest.param(VerificationFailedPause(None, False),
                     "its changes are in, but no check ran after them", id="no-check"),
        pytest.param(WorkNotStartedPause(Blocker("edit_file", "Error: no match")),
                     "it never landed a change — only a description of the work",
                     id="work-not-started"),
        pytest.param(FilesMissingPause(("hello.py",)), "hello.py was not created",
                     id="files-missing"),
        pytest.param(Paused("memory is low."), "memory is low", id="paused-reason"),
        pytest.param(BlockedPause("I can't reach\nthe network."),
                     "it was blocked: I can't reach the network", id="blocked"),
        pytest.param(QuestionPause("JSON or\nSQLite?"), "it asks: JSON or SQLite?",
                     id="question"),
        pytest.param(ProviderFailure("HTTP 500"), "every model failed (last error: HTTP 500)",
                     id="providers"),
        pytest.param(Failed("the model could not be set up…"), "the model could not be set up",
                     id="failed"),
        pytest.param(Aborted("interrupt"), "it was stopped", id="aborted"),
        pytest.param(VerifiedCompletion(PASSED), None, id="verified"),
        pytest.param(NoChangesCompletion("snapshot"), None, id="no-changes"),
    ],
)
def test_why_not_done(ending: Ending, why: str | None) -> None:
    assert why_not_done(ending) == why
