"""Planning runs: "continue" requests, refusing a paused task's text, picking and claiming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.continuation import STEP_BUDGET_NUDGE
from mercury_nb.ledger.access import LedgerHandle, open_ledger
from mercury_nb.ledger.recorder import task_header
from mercury_nb.ledger.records import TaskHeader, TaskRecord
from mercury_nb.ledger.texts import PAUSED_DUPLICATE
from mercury_nb.runs.planning import (
    PlannedRun,
    Refusal,
    continue_request,
    continue_words,
    plan_continue,
    plan_task,
    resume_config,
)
from mercury_nb.runs.request import RunRequest
from mercury_nb.runs.settings import continue_flags
from mercury_nb.testing import Turn, call


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("continue", (True, None), id="bare"),
        pytest.param("  Continue.\n", (True, None), id="case-and-dot"),
        pytest.param("resume", (True, None), id="resume"),
        pytest.param("continue abc123def456", (True, "abc123def456"), id="with-id"),
        pytest.param("continue ABC123", (True, "abc123"), id="upper-prefix"),
        pytest.param("continue abc123def456.2", (True, "abc123def456.2"), id="subagent-id"),
        pytest.param("continue the refactor", (False, None), id="a-task-about-continuing"),
        pytest.param("continue abc", (False, None), id="prefix-too-short"),
        pytest.param("Add a continue button", (False, None), id="other-task"),
        pytest.param("continue, but use pytest", (True, None), id="with-words"),
        pytest.param("Continue: use pytest", (True, None), id="colon-words"),
        pytest.param("continue abc123def456 — use pytest", (True, "abc123def456"),
                     id="id-and-words"),
        pytest.param("continue,", (False, None), id="comma-and-nothing"),
    ],
)
def test_continue_requests(text: str, expected: tuple[bool, str | None]) -> None:
    assert continue_request(text) == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        pytest.param("continue", None, id="bare"),
        pytest.param("continue abc123def456", None, id="with-id"),
        pytest.param("continue, but use pytest", "but use pytest", id="comma"),
        pytest.param("resume: run the tests\nwith -x", "run the tests\nwith -x",
                     id="colon-multiline"),
        pytest.param("continue abc123; use pytest ", "use pytest", id="id-and-semicolon"),
        pytest.param("continue the refactor", None, id="a-task-about-continuing"),
    ],
)
def test_continue_words(text: str, words: str | None) -> None:
    assert continue_words(text) == words


def test_continue_flags_keep_the_tasks_workspace_and_mode() -> None:
    given = {"model": "openai/x", "fallback": ["openai/y"], "max_steps": 9, "yes": True,
             "workdir": Path("/elsewhere"), "chat": True, "json": True}
    assert continue_flags(given) == {"model": "openai/x", "fallback": ["openai/y"],
                                     "max_steps": 9, "yes": True}
    assert continue_flags({}) == {}


@pytest.fixture
def handle(home: Path, clock) -> LedgerHandle:
    opened = open_ledger(home)
    opened.ledger.clock = clock
    return opened


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def record_task(handle: LedgerHandle, task_id: str, task: str, workspace: Path,
                status: str) -> None:
    header = TaskHeader(id=task_id, task=task, workspace=str(workspace.resolve()),
                        models=("openai/a", "openai/b"))
    handle.ledger.start_task(header)
    handle.ledger.finish_task(header, status=status, verdict="steps-exhausted", banner="paused",
                              blocker=None, changes="[]", evidence="[]", steps=4)


def test_a_paused_tasks_text_is_refused_in_its_workspace(handle: LedgerHandle, workspace: Path,
                                                         tmp_path: Path) -> None:
    record_task(handle, "p1", "Build the site", workspace, "paused")
    refused = plan_task(handle, RunRequest(task="  Build the site\n").task,
                        MercuryConfig(workdir=workspace))
    assert isinstance(refused, Refusal) and refused.paused
    assert refused.message.splitlines() == [PAUSED_DUPLICATE, "(task p1)"]
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    assert isinstance(plan_task(handle, "Build the site", MercuryConfig(workdir=elsewhere)),
                      PlannedRun)
    assert isinstance(plan_task(handle, "Build the blog", MercuryConfig(workdir=workspace)),
                      PlannedRun)
    assert isinstance(plan_task(None, "Build the site", MercuryConfig(workdir=workspace)),
                      PlannedRun)


def test_a_paused_task_holding_a_secret_is_refused_as_stored(handle: LedgerHandle,
                                                             workspace: Path) -> None:
    """The ledger keeps a task's text redacted: the duplicate check compares that form."""
    config = MercuryConfig(workdir=workspace, api_key="sk-test-abcdefghijklmnop1234")
    text = "deploy with key sk-test-abcdefghijklmnop1234 to the server"
    header = task_header("p2", text, config)
    assert header.task != text  # stored redacted
    handle.ledger.start_task(header)
    handle.ledger.finish_task(header, status="paused", verdict="steps-exhausted",
                              banner="paused", blocker=None, changes="[]", evidence="[]",
                              steps=4)
    refused = plan_task(handle, text, config)
    assert isinstance(refused, Refusal) and refused.paused
    assert refused.message.splitlines() == [PAUSED_DUPLICATE, "(task p2)"]


@pytest.mark.parametrize(
    ("task_id", "message"),
    [
        pytest.param(None, "There is no paused task to continue in ", id="none-paused"),
        pytest.param("nope", "There is no task 'nope' in the work ledger.", id="unknown"),
        pytest.param("done1", "Task done1 is completed; only a paused, failed or aborted task "
                     "continues.", id="completed"),
    ],
)
def test_continue_refusals(handle: LedgerHandle, workspace: Path, task_id: str | None,
                           message: str) -> None:
    record_task(handle, "done1", "finished work", workspace, "completed")
    refused = plan_continue(handle, task_id, MercuryConfig(workdir=workspace))
    assert isinstance(refused, Refusal) and not refused.paused
    assert refused.message.startswith(message)


def test_a_non_resumable_ending_is_not_continued_as_it_is(
    handle: LedgerHandle, workspace: Path
) -> None:
    header = TaskHeader(id="notools1", task="Create hello.py", workspace=str(workspace.resolve()),
                        models=("smollm2",))
    handle.ledger.start_task(header)
    banner = "I can't do this task with smollm2: it does not take tools.\nHow I know: …"
    handle.ledger.finish_task(header, status="failed", verdict="text-stop", banner=banner,
                              blocker="How I know: …", changes="[]", evidence="[]", steps=1,
                              resumable=False, cause='{"models": ["smollm2"]}')
    record = handle.ledger.get("notools1")
    assert record is not None and not record.resumable and record.to_json()["resumable"] is False
    config = MercuryConfig(workdir=workspace)
    refused = plan_continue(handle, "notools1", config)
    assert isinstance(refused, Refusal) and refused.kind == "cannot-continue"
    assert refused.message == (
        "Task notools1 cannot be continued as it is: a continue would end the same way "
        "(I can't do this task with smollm2: it does not take tools). Fix the cause and run "
        "it again, or continue it with another --model.")
    # another model may cure it: that continue is planned, and the row is resumable again
    plan = plan_continue(handle, "notools1", config, {"model": "openai/qwen"})
    assert isinstance(plan, PlannedRun)
    record = handle.ledger.get("notools1")
    assert record is not None and record.status == "running" and record.resumable


def test_continue_without_a_ledger_is_refused(workspace: Path) -> None:
    refused = plan_continue(None, None, MercuryConfig(workdir=workspace))
    assert isinstance(refused, Refusal)


def test_continue_claims_the_latest_paused_task_once(handle: LedgerHandle, workspace: Path,
                                                      clock) -> None:
    record_task(handle, "older", "first", workspace, "paused")
    clock.now += 10
    record_task(handle, "newer", "second", workspace, "paused")
    config = MercuryConfig(workdir=workspace, api_key="sk-current-key-123")
    plan = plan_continue(handle, None, config)
    assert isinstance(plan, PlannedRun)
    assert (plan.task_id, plan.task, plan.resumed, plan.checkpoint) == (
        "newer", "second", True, None)
    # no checkpoint: the current settings in the task's workspace, with its model chain
    assert plan.config.model_chain == ("openai/a", "openai/b")
    assert plan.config.workdir == workspace.resolve()
    record = handle.ledger.get("newer")
    assert record is not None and record.status == "running"
    again = plan_continue(handle, "newer", config)
    assert isinstance(again, Refusal) and "is running" in again.message


def test_resume_config_takes_the_checkpoint_settings_and_the_current_key(
    workspace: Path, tmp_path: Path
) -> None:
    stored = MercuryConfig(workdir=workspace, model="openai/a", fallbacks=("openai/b",),
                           max_steps=7).model_dump(mode="json", exclude={"api_key"})
    stored["a_field_from_the_future"] = 1
    current = MercuryConfig(workdir=tmp_path, model="openai/zzz", api_key="sk-now-12345678",
                            home=tmp_path / "h")
    record = TaskRecord(id="t", task="x", workspace=str(workspace), models=("openai/a",),
                        status="paused", verdict=None, banner=None, blocker=None, changes=[],
                        evidence=[], steps=0, created_at=0, updated_at=0, owner_pid=None,
                        owner_token=None, has_checkpoint=True)
    config = resume_config(record, {"config": stored}, current, {"max_steps": 3})
    assert config.model_chain == ("openai/a", "openai/b")
    assert config.workdir == workspace and config.max_steps == 3
    assert config.api_key is not None and config.api_key.get_secret_value() == "sk-now-12345678"
    assert config.home == tmp_path / "h"


async def test_a_paused_task_resumes_and_measures_from_its_original_start(
    handle: LedgerHandle, workspace: Path, scripted_model
) -> None:
    (workspace / "notes.txt").write_text("before\n")
    config = MercuryConfig(workdir=workspace, max_steps=1, max_auto_continuations=0)
    first = plan_task(handle, "write the files", config)
    assert isinstance(first, PlannedRun)
    model = scripted_model([Turn(tool_calls=(call("write_file", path="a.txt", content="a\n"),))])
    paused = await first.run(lambda event: None, model=model)
    assert paused.status == "paused"

    assert isinstance(plan_task(handle, "write the files", config), Refusal)
    plan = plan_continue(handle, None, config, {"max_steps": 5},
                         words=continue_words("continue, and update notes.txt too"))
    assert isinstance(plan, PlannedRun) and plan.checkpoint is not None
    assert plan.task_id == paused.task_id
    resumed_model = scripted_model([
        Turn(tool_calls=(call("edit_file", path="notes.txt", old_text="before",
                              new_text="after"),)),
        Turn(text="Wrote a.txt and updated notes.txt."),
    ])
    outcome = await plan.run(lambda event: None, model=resumed_model)
    assert outcome.status == "completed"
    assert outcome.task_id == paused.task_id
    assert outcome.steps == 3
    assert [(c.path, c.kind) for c in outcome.changes] == [("a.txt", "created"),
                                                          ("notes.txt", "modified")]
    handle.flush()
    record = handle.ledger.get(paused.task_id)
    assert record is not None and record.status == "completed"
    kinds = [e.kind for e in handle.ledger.events(paused.task_id)]
    assert kinds.count("task-started") == 1 and kinds.count("resume") == 1
    # the resumed model saw the whole conversation, then the resume turn and the user's words
    sent = resumed_model.requests[0].messages
    assert sent[1] == {"role": "user", "content": "write the files"}
    assert sent[-2]["role"] == "user"
    assert sent[-2]["content"].startswith(STEP_BUDGET_NUDGE)
    assert 'The task remains: "write the files"' in sent[-2]["content"]
    assert "a.txt (created)" in sent[-2]["content"]
    assert sent[-1] == {"role": "user", "content": "and update notes.txt too"}


def test_an_unusable_ledger_is_reported_once(tmp_path: Path) -> None:
    from mercury_nb.ledger.access import startup

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    first = startup(blocker / "home")
    assert first.handle is None
    assert len(first.notices) == 1 and "could not be opened" in first.notices[0]
    again = startup(blocker / "home")
    assert again.handle is None and again.notices == ()


@pytest.mark.parametrize(
    "checkpoint",
    [
        pytest.param(None, id="none"),
        pytest.param({"version": 1, "task": "x"}, id="no-snapshot"),
        pytest.param({"version": 99, "snapshot": "{}"}, id="other-version"),
        pytest.param({"version": 1, "snapshot": '{"version": 99}'}, id="other-snapshot-version"),
    ],
)
def test_unusable_checkpoints_restart_from_the_text(checkpoint: dict[str, object] | None) -> None:
    from mercury_nb.agent.checkpoint import restorable

    assert restorable(checkpoint) is None


def finish_too_small(handle: LedgerHandle, workspace: Path, task_id: str) -> None:
    """A task that ended WindowTooSmall under the full tool set and no declared window."""
    header = TaskHeader(id=task_id, task="Create hello.py", workspace=str(workspace.resolve()),
                        models=("openai/smollm2",))
    handle.ledger.start_task(header)
    cause = {"models": ["openai/smollm2"], "api_base": None, "tool_set": "full",
             "context_window": None}
    handle.ledger.finish_task(header, status="failed", verdict=None,
                              banner="This model's 2,048-token window cannot hold the tools.",
                              blocker=None, changes="[]", evidence="[]", steps=0,
                              resumable=False, cause=json.dumps(cause))


def test_the_same_model_named_again_does_not_continue_a_non_resumable_ending(
    handle: LedgerHandle, workspace: Path
) -> None:
    finish_too_small(handle, workspace, "small1")
    config = MercuryConfig(workdir=workspace, model="openai/smollm2")
    refused = plan_continue(handle, "small1", config, {"model": "openai/smollm2"})
    assert isinstance(refused, Refusal) and refused.kind == "cannot-continue"


@pytest.mark.parametrize(
    ("env", "field", "value"),
    [
        pytest.param({"MERCURY_TOOL_SET": "compact"}, "tool_set", "compact", id="compact-tools"),
        pytest.param({"MERCURY_CONTEXT_WINDOW": "8192"}, "context_window", 8192, id="window"),
    ],
)
def test_an_environment_fix_continues_a_window_too_small(
    handle: LedgerHandle, workspace: Path, env: dict[str, str], field: str, value: object
) -> None:
    finish_too_small(handle, workspace, "small2")
    current = MercuryConfig.load(env, workdir=workspace, model="openai/smollm2")
    plan = plan_continue(handle, "small2", current)
    assert isinstance(plan, PlannedRun), plan
    assert getattr(plan.config, field) == value and plan.settings_changed
    # without the fix the same continue is refused
    finish_too_small(handle, workspace, "small3")
    again = plan_continue(handle, "small3", MercuryConfig(workdir=workspace,
                                                          model="openai/smollm2"))
    assert isinstance(again, Refusal) and again.kind == "cannot-continue"
