"""The server extension's wire models: request bodies in, task summaries and details out."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_BODY_BYTES = 64 * 1024
"""A request body above this size is refused with 413 before it is parsed."""
MAX_TASK_CHARS = 20_000
MAX_PAGE = 200
DEFAULT_PAGE = 50
"""GET tasks without ``limit``: the page size (the panel's too), unless the server sets
``MercuryServerApp.page_size``."""


class StartBody(BaseModel):
    """POST /mercury/api/tasks: a new task in ``workdir`` (relative to the server root)."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1, max_length=MAX_TASK_CHARS)
    model: str | None = Field(default=None, min_length=1, max_length=200)
    fallbacks: list[str] = Field(default_factory=list, max_length=8)
    workdir: str = Field(default="", max_length=4096)
    max_steps: int | None = None
    """Its bounds are the config's, checked by the door (a refusal is this API's 400)."""


class ContinueBody(BaseModel):
    """POST /mercury/api/tasks/{id}/continue: optional overrides for the resumed run."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, min_length=1, max_length=200)
    max_steps: int | None = None


class TaskSummary(BaseModel):
    """One row of the task list."""

    id: str
    task: str
    workspace: str
    status: str
    verdict: str | None
    banner: str | None
    blocker: str | None
    models: list[str]
    steps: int
    created_at: float
    updated_at: float
    live: dict[str, Any] | None = None
    """For a task running in this server: step, tool, activity and timestamps."""
    parent: str | None = None
    """For a delegate_task sub-agent: the task that delegated it."""
    resumable: bool = True
    """Whether a "continue" can succeed: the panel offers Continue only then."""


class TaskList(BaseModel):
    tasks: list[TaskSummary]
    limit: int
    offset: int
    has_more: bool


class Cost(BaseModel):
    """Estimated cost of one model's tokens; ``usd`` None means "unknown"."""

    model: str
    usd: float | None
    reason: str | None = None


class TaskDetailOut(BaseModel):
    """GET /mercury/api/tasks/{id}: everything the panel's detail view shows."""

    task: TaskSummary
    answer: str | None = None
    changes: list[dict[str, Any]] = Field(default_factory=list)
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    providers: dict[str, str] = Field(default_factory=dict)
    usage: dict[str, dict[str, int]] = Field(default_factory=dict)
    costs: list[Cost] = Field(default_factory=list)
    events: list[dict[str, Any]] = Field(default_factory=list)
    subagents: list[TaskSummary] = Field(default_factory=list)
    """The sub-agents this task delegated, in the order they started."""
