"""The delegate_task tool: hands a sub-task to a supervised sub-agent and reports it honestly."""

from __future__ import annotations

from pydantic import BaseModel, Field

from mercury_nb.contract.banners import NO_CHANGES, change_summary_lines, evidence_line
from mercury_nb.contract.endings import NoChangesCompletion, VerifiedCompletion
from mercury_nb.contract.recovery.subagent_supervisor import SubagentRun
from mercury_nb.contract.text_cut import clip
from mercury_nb.tools.base import ToolContext, ToolError, ToolResult
from mercury_nb.tools.function_tool import FunctionTool

DELEGATE_TOOL_NAME = "delegate_task"

ANSWER_CHARS = 2000
"""Characters of a completed sub-agent's answer quoted to the parent."""

PAUSED_ADVICE = (
    "Decide what to do next: finish the rest yourself, delegate a narrower task, "
    "or tell the user it is not done."
)
CHECK_ADVICE = (
    "Its changes are on disk now: run a passing check of your own after this call "
    "before you finish."
)


class DelegateTaskArgs(BaseModel):
    task: str = Field(
        min_length=1,
        description=(
            "The whole sub-task in one self-contained message: the sub-agent does not see "
            "this conversation. Say what to build or change, where, and how to check it."
        ),
    )


async def delegate_task(args: DelegateTaskArgs, ctx: ToolContext) -> ToolResult:
    runner = ctx.subagents
    if runner is None:
        raise ToolError("delegate_task is not available here: no parent agent to supervise it")
    task = args.task.strip()
    if not task:
        raise ToolError("delegate_task needs a task: say what the sub-agent should do")
    return delegate_result(await runner(task, ctx))


def delegate_result(run: SubagentRun) -> ToolResult:
    """The parent's tool result. It starts with the status: ``completed:`` (with the evidence
    line), or ``paused:`` / ``failed:`` / ``aborted:`` naming why. It lists the files the
    sub-agent changed as ``changed_paths``, so the parent's evidence must come after it."""
    report = run.report
    outcome = run.outcome
    status = report.status
    steps = f"{outcome.steps} step{'s' if outcome.steps != 1 else ''}"
    resumes = f"{report.resumes} automatic resume{'s' if report.resumes != 1 else ''}"
    paths = tuple(change.path for change in outcome.changes)
    lines: list[str]
    if status == "completed":
        lines = [f"completed: sub-agent {run.sub_id} finished the task ({steps}, {resumes})."]
        lines.extend(_evidence_lines(run))
        if outcome.answer:
            answer = outcome.answer.strip()
            answer = clip(answer, ANSWER_CHARS)  # redacted before the cut
            lines.append(f"Its answer: {answer}")
        if paths:
            lines.append(CHECK_ADVICE)
    else:
        lines = [
            f"{status}: sub-agent {run.sub_id} stopped — {report.why} "
            f"({steps}, {resumes}). It is NOT done."
        ]
        if outcome.blocker and not _says_the_same(outcome.blocker, report.why or ""):
            lines.append(outcome.blocker)
        if outcome.changes:
            lines.append("Changes so far:")
            lines.extend(_change_lines(run))
        lines.append(PAUSED_ADVICE)
    # ok: the sub-agent ran (its status is the first word); a failed call would hide its
    # changes from the parent's evidence order
    return ToolResult(ok=True, content="\n".join(lines), changed_paths=paths)


def _evidence_lines(run: SubagentRun) -> list[str]:
    """The completion's evidence line, then its change lines (``NoChanges``: one line)."""
    match run.report.ending:
        case VerifiedCompletion(evidence=evidence):
            return [evidence_line(evidence), *_change_lines(run)]
        case NoChangesCompletion(verified_by=how):
            return [NO_CHANGES.format(how=how)]
        case _:
            return []


def _says_the_same(blocker: str, why: str) -> bool:
    """The blocker line only repeats the why (a plain pause's reason, a failure's error)."""
    return blocker.strip().rstrip(".…") in why or why in blocker


def _change_lines(run: SubagentRun) -> list[str]:
    return change_summary_lines(run.outcome.changes)


DELEGATE_TASK_TOOL = FunctionTool(
    name=DELEGATE_TOOL_NAME,
    description=(
        "Hand a self-contained part of the work to a sub-agent. It works in this same "
        "workspace with its own step budget and the same tools (except delegate_task), "
        "and does not see this conversation. The result starts with 'completed:' (with its "
        "evidence) or 'paused:' / 'failed:' (with why). Files it changed still need a "
        "passing check of yours afterwards."
    ),
    brief="Hand a self-contained sub-task to a sub-agent (it does not see this chat).",
    args_model=DelegateTaskArgs,
    handler=delegate_task,
)
