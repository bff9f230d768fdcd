"""The panel's approvals through the real server: a task in ``edits`` mode asks before its
command, the pending approval shows in the task's detail, and POST .../approval answers it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from panel_scripts import check_command, verified
from test_handlers import (
    Fetch,
    call,
    jp_server_config,
    models,
    on_server_loop,
    start,
    wait_status,
)
from tornado.httpclient import HTTPClientError

from mercury_nb.testing import Turn
from mercury_nb.testing import call as call_tool

__all__ = ["jp_server_config", "models"]  # fixtures shared with test_handlers

FINISHED = ("completed", "paused", "failed", "aborted")
WRITE = "python -c \"open('made.txt', 'w').write('ok')\""


@pytest.fixture(autouse=True)
def _edits_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default mode (the folder's conftest runs the other tests' commands unasked)."""
    monkeypatch.setenv("MERCURY_PERMISSIONS", "edits")


async def pending_approval(fetch: Fetch, task_id: str, timeout: float = 30.0) -> dict[str, Any]:
    """The task's pending approval once its detail shows one."""
    deadline = time.monotonic() + timeout
    while True:
        detail = await call(fetch, "tasks", task_id)
        live = detail["task"]["live"] or {}
        if live.get("approval"):
            return dict(live["approval"])
        assert detail["task"]["status"] == "running", detail["task"]
        assert time.monotonic() < deadline, "no approval asked"
        await asyncio.sleep(0.05)


async def exists(fetch: Fetch, task_id: str) -> bool:
    try:
        await fetch("mercury", "api", "tasks", task_id)
    except HTTPClientError as error:
        assert error.code == 404, error
        return False
    return True


def kinds(detail: dict[str, Any]) -> list[str]:
    return [event["kind"] for event in detail["events"]]


@on_server_loop
async def test_allow_once_runs_the_command_and_the_task_completes(
    jp_fetch: Fetch, models: Any
) -> None:
    task_id = await start(jp_fetch, models("approve-once", verified()), "Add a passing test.")
    asked = await pending_approval(jp_fetch, task_id)
    assert asked["request"] == 1 and asked["tool"] == "run_command"
    assert "pytest" in asked["command"] and asked["suggested_rule"]
    await call(jp_fetch, "tasks", task_id, "approval", method="POST",
               body={"request": 2, "answer": "once"}, expect=409)  # not the pending one
    reply = await call(jp_fetch, "tasks", task_id, "approval", method="POST",
                       body={"request": 1, "answer": "once"})
    assert reply["answer"] == "allow-once"
    stale = await call(jp_fetch, "tasks", task_id, "approval", method="POST",
                       body={"request": 1, "answer": "once"}, expect=409)
    assert stale["kind"] == "nothing-pending"
    done = await wait_status(jp_fetch, task_id, FINISHED)
    assert done["task"]["status"] == "completed", done["task"]
    assert [e["command"] for e in done["evidence"]] == [asked["command"]]
    assert done["evidence"][0]["exit_code"] == 0
    answered = [e for e in done["events"] if e["kind"] == "permission-answered"]
    assert [e["data"]["answer"] for e in answered] == ["allow-once"]


@on_server_loop
async def test_deny_gives_the_model_a_denial_and_the_command_does_not_run(
    jp_fetch: Fetch, models: Any
) -> None:
    task_id = await start(jp_fetch, models("approve-deny", verified()), "Add a passing test.")
    asked = await pending_approval(jp_fetch, task_id)
    await call(jp_fetch, "tasks", task_id, "approval", method="POST",
               body={"request": asked["request"], "answer": "deny"})
    deadline = time.monotonic() + 30
    while True:  # the denied call's end, then the task goes on (the model was told)
        detail = await call(jp_fetch, "tasks", task_id)
        finished = [e["data"] for e in detail["events"] if e["kind"] == "tool-finished"
                    and e["data"]["name"] == "run_command"]
        if finished:
            break
        assert time.monotonic() < deadline, kinds(detail)
        await asyncio.sleep(0.05)
    assert finished[0]["ok"] is False
    answered = [e["data"] for e in detail["events"] if e["kind"] == "permission-answered"]
    assert [(a["answer"], a["why"]) for a in answered] == [("deny", "the user denied it")]
    assert (detail["task"]["live"] or {}).get("approval") is None
    assert all(e["exit_code"] is None for e in detail["evidence"])  # it never ran
    await call(jp_fetch, "tasks", task_id, "stop", method="POST", body={})
    await wait_status(jp_fetch, task_id, FINISHED)


@on_server_loop
async def test_always_allow_saves_the_rule_and_the_next_task_runs_it_unasked(
    jp_fetch: Fetch, jp_root_dir: Path, models: Any
) -> None:
    (jp_root_dir / "ws").mkdir()
    first = await start(jp_fetch, models("approve-always", verified()), "Add a test.", "ws")
    asked = await pending_approval(jp_fetch, first)
    await call(jp_fetch, "tasks", first, "approval", method="POST",
               body={"request": asked["request"], "answer": "always"})
    done = await wait_status(jp_fetch, first, FINISHED)
    assert done["task"]["status"] == "completed", done["task"]
    again_script = [Turn(tool_calls=(call_tool("run_command", command=asked["command"]),)),
                    Turn(text="test_ok.py still passes.")]
    second = await start(jp_fetch, models("approve-after", again_script), "Rerun it.", "ws")
    again = await wait_status(jp_fetch, second, FINISHED)
    assert again["task"]["status"] == "completed", again["task"]
    assert "permission-asked" not in kinds(again)
    assert len(again["evidence"]) == 1


@on_server_loop
async def test_no_answer_within_the_timeout_denies_and_pauses_naming_the_command(
    jp_fetch: Fetch, models: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MERCURY_APPROVAL_TIMEOUT_S", "0.01")
    task_id = await start(jp_fetch, models("approve-late", verified()), "Add a passing test.")
    done = await wait_status(jp_fetch, task_id, FINISHED)
    assert done["task"]["status"] == "paused", done["task"]
    answered = [e["data"] for e in done["events"] if e["kind"] == "permission-answered"]
    assert answered and answered[0]["answer"] == "deny"
    assert "within" in answered[0]["why"]
    assert "pytest" in (done["task"]["blocker"] or done["task"]["banner"] or "")
    late = await call(jp_fetch, "tasks", task_id, "approval", method="POST",
                      body={"request": 1, "answer": "once"}, expect=409)
    assert late["kind"] == "nothing-pending"


@pytest.mark.parametrize("body", [{}, {"request": 1}, {"request": 0, "answer": "once"},
                                  {"request": 1, "answer": "yes"}, "not json"])
@on_server_loop
async def test_bad_approval_bodies_get_400(jp_fetch: Fetch, body: Any) -> None:
    await call(jp_fetch, "tasks", "abc123", "approval", method="POST", body=body, expect=400)


@on_server_loop
async def test_an_unknown_task_gets_404(jp_fetch: Fetch) -> None:
    await call(jp_fetch, "tasks", "abc123", "approval", method="POST",
               body={"request": 1, "answer": "deny"}, expect=404)


@on_server_loop
async def test_a_task_continued_from_the_panel_asks_the_panel_again(
    jp_fetch: Fetch, models: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MERCURY_MAX_AUTO_CONTINUATIONS", "0")
    task_id = await start(jp_fetch, models("approve-resume", verified()), "Add a passing test.",
                          max_steps=1)
    paused = await wait_status(jp_fetch, task_id, FINISHED)
    assert paused["task"]["status"] == "paused", paused["task"]  # the step budget, unasked
    await call(jp_fetch, "tasks", task_id, "continue", method="POST", body={"max_steps": 5})
    asked = await pending_approval(jp_fetch, task_id)
    assert asked["request"] == 1 and "pytest" in asked["command"]
    await call(jp_fetch, "tasks", task_id, "approval", method="POST",
               body={"request": 1, "answer": "once"})
    done = await wait_status(jp_fetch, task_id, FINISHED)
    assert done["task"]["status"] == "completed", done["task"]
    assert [e["exit_code"] for e in done["evidence"]][-1] == 0


@on_server_loop
async def test_a_deny_the_task_cannot_get_past_pauses_naming_the_command_and_continue_runs_it(
    jp_fetch: Fetch, models: Any
) -> None:
    check = check_command("test_ok.py")
    script = [*verified()[:2],
              Turn(tool_calls=(call_tool("finish", status="blocked",
                                         blocker="I may not run the tests."),)),
              Turn(tool_calls=(call_tool("run_command", command=check),)),
              Turn(text="test_ok.py passes.")]
    task_id = await start(jp_fetch, models("approve-denied", script), "Add a passing test.")
    asked = await pending_approval(jp_fetch, task_id)
    await call(jp_fetch, "tasks", task_id, "approval", method="POST",
               body={"request": asked["request"], "answer": "deny"})
    paused = await wait_status(jp_fetch, task_id, FINISHED)
    task = paused["task"]
    denied = (f'you denied permission to run "{check}" — allow it with '
              f'--allow "{asked["suggested_rule"]}" or --permissions auto '
              "(the model said: I may not run the tests.)")
    assert (task["status"], task["resumable"], task["blocker"]) == ("paused", True, denied)
    assert denied in task["banner"]
    await call(jp_fetch, "tasks", task_id, "continue", method="POST", body={})
    again = await pending_approval(jp_fetch, task_id)
    assert again["request"] == 1 and again["command"] == check  # asked anew, numbered anew
    await call(jp_fetch, "tasks", task_id, "approval", method="POST",
               body={"request": 1, "answer": "once"})
    done = await wait_status(jp_fetch, task_id, FINISHED)
    assert done["task"]["status"] == "completed", done["task"]
    assert done["task"]["blocker"] is None and "denied" not in done["task"]["banner"]
    assert [e["exit_code"] for e in done["evidence"]][-1] == 0


@on_server_loop
async def test_a_subagents_question_is_answered_on_its_own_row(
    jp_fetch: Fetch, models: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sub-agent asks through its parent's approver (the panel's): its row shows the
    question, says it is asked in the panel, and an answer posted there reaches it."""
    monkeypatch.setenv("MERCURY_RETRY_ATTEMPTS", "0")  # the parent's script ends unchecked
    script = [Turn(tool_calls=(call_tool("delegate_task", task="Write made.txt."),)),
              Turn(tool_calls=(call_tool("run_command", command=WRITE),)),
              Turn(text="Wrote made.txt."),
              Turn(text="The helper wrote made.txt.")]
    task_id = await start(jp_fetch, models("approve-sub", script), "Have a helper write it.")
    deadline = time.monotonic() + 30
    while not await exists(jp_fetch, f"{task_id}.1"):  # its row is written as it starts
        assert time.monotonic() < deadline, "the sub-agent never started"
        await asyncio.sleep(0.05)
    asked = await pending_approval(jp_fetch, f"{task_id}.1")
    assert (asked["command"], asked["asked_in"]) == (WRITE, "panel")
    reply = await call(jp_fetch, "tasks", f"{task_id}.1", "approval", method="POST",
                       body={"request": asked["request"], "answer": "once"})
    assert reply["answer"] == "allow-once"
    sub = await wait_status(jp_fetch, f"{task_id}.1", FINISHED)
    assert sub["task"]["status"] == "completed", sub["task"]
    answered = [e["data"]["answer"] for e in sub["events"]
                if e["kind"] == "permission-answered"]
    assert answered == ["allow-once"]
    assert (Path(sub["task"]["workspace"]) / "made.txt").read_text() == "ok"
    await wait_status(jp_fetch, task_id, FINISHED)  # the parent's own ending is its gate's
