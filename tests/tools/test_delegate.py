"""The delegate_task tool: its schema, its refusals, and the result text the parent model reads."""

from __future__ import annotations

from typing import Any

import pytest

from mercury_nb.contract.endings import (
    Blocker,
    Ending,
    NoChangesCompletion,
    Paused,
    ProviderFailure,
    StepBudgetPause,
    VerificationFailedPause,
    VerifiedCompletion,
    WorkNotStartedPause,
    status_of,
)
from mercury_nb.contract.gate.verification import CheckRecord, ReadBack, Verified
from mercury_nb.contract.outcome import FileChange, TaskOutcome
from mercury_nb.contract.recovery.subagent_supervisor import (
    ReportToParent,
    SubagentRun,
    why_not_done,
)
from mercury_nb.tools.base import ToolContext
from mercury_nb.tools.delegate import (
    ANSWER_CHARS,
    CHECK_ADVICE,
    PAUSED_ADVICE,
    delegate_result,
)
from mercury_nb.tools.registry import ToolRegistry

CREATED = FileChange(path="calc.py", added=2, removed=0, kind="created")
EDITED = FileChange(path="app.py", added=3, removed=1)
FAILED_CHECK = CheckRecord("python -m pytest -q", 1, seq=4)


def run_of(
    ending: Ending,
    changes: tuple[FileChange, ...] = (),
    *,
    resumes: int = 0,
    steps: int = 5,
    answer: str | None = None,
    blocker: str | None = None,
) -> SubagentRun:
    status = status_of(ending)
    outcome = TaskOutcome(
        task_id="p.1", task="sub task", status=status, verdict="text-stop",
        answer=answer if status == "completed" else None, banner="(banner)", blocker=blocker,
        changes=list(changes), steps=steps,
    )
    return SubagentRun("p.1", outcome, ReportToParent(ending, resumes, why_not_done(ending)))


def test_the_tool_is_registered_with_one_required_task(registry: ToolRegistry) -> None:
    [schema] = registry.schemas(["delegate_task"])
    parameters = schema["function"]["parameters"]
    assert parameters["required"] == ["task"]
    assert set(parameters["properties"]) == {"task"}
    assert not registry.is_mutating("delegate_task")  # it mutates only when files changed


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param({"task": "Write calc.py"},
                     "Error: delegate_task is not available here: no parent agent to supervise it",
                     id="no-parent-agent"),
        pytest.param({}, "Error: invalid arguments for delegate_task: task is required",
                     id="missing-task"),
        pytest.param({"task": "  \n"},
                     "Error: delegate_task is not available here: no parent agent to supervise it",
                     id="blank-task-without-parent"),
    ],
)
async def test_refusals_go_back_to_the_model(
    registry: ToolRegistry, ctx: ToolContext, arguments: dict[str, Any], message: str
) -> None:
    result = await registry.execute("delegate_task", arguments, ctx)
    assert not result.ok
    assert result.content == message


async def test_a_blank_task_is_refused_before_anything_runs(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    async def never(task: str, ctx: ToolContext) -> SubagentRun:
        raise AssertionError("a blank task must not reach the runner")

    ctx.subagents = never
    result = await registry.execute("delegate_task", {"task": " \t"}, ctx)
    assert result.content == "Error: delegate_task needs a task: say what the sub-agent should do"


def test_completed_with_a_check_quotes_its_evidence_and_asks_for_the_parents_check() -> None:
    ending = VerifiedCompletion(Verified(CheckRecord("python -m pytest -q", 0, seq=3)))
    result = delegate_result(run_of(ending, (CREATED,), steps=1, answer="Added add()."))
    assert result.ok
    assert result.changed_paths == ("calc.py",)
    assert result.content.split("\n") == [
        "completed: sub-agent p.1 finished the task (1 step, 0 automatic resumes).",
        "✓ Verified: python -m pytest -q ✓",
        "+2 −0 calc.py (created)",
        "Its answer: Added add().",
        CHECK_ADVICE,
    ]


def test_completed_by_read_back_and_a_long_answer_is_cut() -> None:
    ending = VerifiedCompletion(ReadBack(("notes.md",)))
    result = delegate_result(run_of(ending, (), resumes=1, answer="x" * 5000))
    lines = result.content.split("\n")
    assert lines[:2] == [
        "completed: sub-agent p.1 finished the task (5 steps, 1 automatic resume).",
        "✓ Verified: change summary and read-back of notes.md ✓",
    ]
    assert lines[2] == "Its answer: " + "x" * (ANSWER_CHARS - 1) + "…"
    assert len(lines) == 3  # no changes: no advice to check


def test_no_changes_completion_says_how_it_was_verified() -> None:
    result = delegate_result(run_of(NoChangesCompletion("git"), answer="42"))
    assert result.content == (
        "completed: sub-agent p.1 finished the task (5 steps, 0 automatic resumes).\n"
        "Response delivered · no file changes (git-verified)\n"
        "Its answer: 42"
    )
    assert result.changed_paths == ()


@pytest.mark.parametrize(
    ("ending", "blocker", "first", "details"),
    [
        pytest.param(
            StepBudgetPause(6), None,
            "paused: sub-agent p.1 stopped — its step budget ran out "
            "(5 steps, 3 automatic resumes). It is NOT done.",
            [], id="step-budget",
        ),
        pytest.param(
            VerificationFailedPause(FAILED_CHECK, False),
            "Last check: python -m pytest -q ✗ (exit 1)",
            "paused: sub-agent p.1 stopped — its changes are in, but the last check didn't pass "
            "(5 steps, 3 automatic resumes). It is NOT done.",
            ["Last check: python -m pytest -q ✗ (exit 1)"], id="check-failed",
        ),
        pytest.param(
            WorkNotStartedPause(Blocker("edit_file", "Error: no match")),
            "What blocked it: edit_file: Error: no match",
            "paused: sub-agent p.1 stopped — it never landed a change — only a description of "
            "the work (5 steps, 3 automatic resumes). It is NOT done.",
            ["What blocked it: edit_file: Error: no match"], id="work-not-started",
        ),
        pytest.param(
            Paused("memory is low."), "memory is low.",
            "paused: sub-agent p.1 stopped — memory is low (5 steps, 3 automatic resumes). "
            "It is NOT done.",
            [], id="reason-not-repeated",
        ),
        pytest.param(
            ProviderFailure("HTTP 500"), "HTTP 500",
            "failed: sub-agent p.1 stopped — every model failed (last error: HTTP 500) "
            "(5 steps, 3 automatic resumes). It is NOT done.",
            [], id="providers-failed",
        ),
    ],
)
def test_not_done_results_start_with_the_status_and_name_why(
    ending: Ending, blocker: str | None, first: str, details: list[str]
) -> None:
    result = delegate_result(run_of(ending, (CREATED, EDITED), resumes=3, blocker=blocker))
    assert result.ok  # the sub-agent ran; its status is the first word
    assert result.changed_paths == ("calc.py", "app.py")
    assert result.content.split("\n") == [
        first,
        *details,
        "Changes so far:",
        "+2 −0 calc.py (created)",
        "+3 −1 app.py",
        PAUSED_ADVICE,
    ]
    assert not result.content.startswith("completed")
