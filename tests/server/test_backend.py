"""The server's bridge to the runs layer: workdir confinement, detail JSON, the live pulse."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mercury_nb import runs
from mercury_nb.ledger.records import TaskRecord
from mercury_nb.server.backend import WorkdirError, detail_json, live_state, resolve_workdir
from tests.runs.ledger_tasks import a_task_with_progress


def _record(status: str = "completed") -> TaskRecord:
    return TaskRecord("abc123def456", "Do it", "/w", ("gpt-4o-mini", "ollama/x"), status,
                      "text-stop", "✓ Task complete", None, [], [], 2, 1.0, 2.0, None, None,
                      True)


@pytest.mark.parametrize(
    ("requested", "ok"),
    [
        pytest.param("", True, id="root"),
        pytest.param("sub", True, id="child"),
        pytest.param("sub/../sub", True, id="dotdot-inside"),
        pytest.param("..", False, id="parent"),
        pytest.param("/", False, id="absolute-outside"),
        pytest.param("nope", False, id="missing"),
    ],
)
def test_workdir_must_be_a_folder_inside_the_root(tmp_path: Path, requested: str,
                                                  ok: bool) -> None:
    (tmp_path / "sub").mkdir()
    if ok:
        assert resolve_workdir(tmp_path, requested).is_relative_to(tmp_path.resolve())
    else:
        with pytest.raises(WorkdirError):
            resolve_workdir(tmp_path, requested)


def test_detail_shows_usage_with_an_estimated_cost_per_model() -> None:
    record = replace(_record(), answer="Done.", usage={
        "gpt-4o-mini": {"prompt_tokens": 1000, "completion_tokens": 100},
        "ollama/x": {"prompt_tokens": 5, "completion_tokens": 5}})
    out = detail_json(runs.TaskDetail(record))
    assert out["answer"] == "Done."
    costs = {c["model"]: c for c in out["costs"]}
    assert costs["gpt-4o-mini"]["usd"] > 0
    assert costs["ollama/x"] == {"model": "ollama/x", "usd": None, "reason": "local model"}


@pytest.mark.parametrize("resumable", [True, False])
def test_the_panel_is_told_whether_a_continue_can_succeed(resumable: bool) -> None:
    record = replace(_record("failed"), resumable=resumable)
    out = detail_json(runs.TaskDetail(record))
    assert out["task"]["resumable"] is resumable


def test_live_state_follows_step_tool_and_pulse_events() -> None:
    events = [
        runs.RunEvent(1, "t", "task-started", 100.0, {}),
        runs.RunEvent(2, "t", "step-started", 101.0, {"step": 3}),
        runs.RunEvent(3, "t", "tool-started", 102.0, {"step": 3, "name": "run_command"}),
        runs.RunEvent(4, "t", "pulse", 110.0, {"silent_s": 6}),
    ]
    assert live_state(events) == {"step": 3, "tool": "run_command", "progress": "",
                                  "started": 100.0, "at": 104.0, "text": "",
                                  "approval": None}


def test_the_panel_reads_the_same_fields_as_before(home: Path, tmp_path: Path) -> None:
    a_task_with_progress(home, tmp_path)
    detail = runs.task_detail("feed00000001", home=home)
    assert detail is not None
    out = detail_json(detail)
    assert sorted(out) == ["answer", "changes", "costs", "events", "evidence", "providers",
                           "subagents", "task", "usage"]
    assert [event["kind"] for event in out["events"]] == ["task-started", "step-started",
                                                          "notice"]
    assert sorted(out["events"][1]) == ["at", "data", "id", "kind", "task_id"]
    assert out["events"][1]["data"] == {"step": 1, "max_steps": 9}
    assert out["task"]["live"]["step"] == 1
    assert [sub["id"] for sub in out["subagents"]] == ["feed00000001.1"]


def test_a_running_task_has_one_step_count_its_live_step() -> None:
    """The header, the list row and the status line all show the step the task is on: the
    live state's, once it is ahead of the last checkpoint's count."""
    from mercury_nb.ledger.records import TaskRecord
    from mercury_nb.runs.events import RunEvent
    from mercury_nb.server import backend

    record = TaskRecord(
        id="t1", task="x", workspace="/ws", models=("m",), status="running", verdict=None,
        banner=None, blocker=None, changes=[], evidence=[], steps=0, created_at=1.0,
        updated_at=2.0, owner_pid=1, owner_token="t", has_checkpoint=False)
    events = [RunEvent(1, "t1", "task-started", 1.0, {}),
              RunEvent(2, "t1", "step-started", 1.5, {"step": 1}),
              RunEvent(3, "t1", "step-started", 2.0, {"step": 2}),
              RunEvent(4, "t1", "text-delta", 2.1, {"text": "Reading "}),
              RunEvent(5, "t1", "text-delta", 2.2, {"text": "it now. "})]
    row = backend.summary(record, events)
    assert row.steps == 2 and row.live is not None and row.live["step"] == 2
    assert row.live["text"] == "Reading it now. "
    finished = backend.summary(TaskRecord(**{**record.__dict__, "status": "completed",
                                             "steps": 3}), events)
    assert finished.steps == 3 and finished.live is None
