"""The one settings resolution: each check of a request runs once, in resolve, typed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.runs import PlannedRun, Refusal, RunRequest, resolve, submit
from mercury_nb.runs.resolve import workdir_refusal
from mercury_nb.testing import ScriptedModel, Turn


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.mark.parametrize(
    ("env", "traitlets", "flags", "expected"),
    [
        pytest.param({}, {}, {}, 75, id="default"),
        pytest.param({"MERCURY_MAX_STEPS": "9"}, {}, {}, 9, id="env"),
        pytest.param({}, {"max_steps": 7}, {}, 7, id="traitlets"),
        pytest.param({"MERCURY_MAX_STEPS": "9"}, {"max_steps": 7}, {}, 9,
                     id="env-over-traitlets"),
        pytest.param({"MERCURY_MAX_STEPS": "9"}, {"max_steps": 7}, {"max_steps": 3}, 3,
                     id="flags-over-all"),
        pytest.param({"MERCURY_MAX_STEPS": "9"}, {}, {"max_steps": None}, 9,
                     id="unset-flag-overrides-nothing"),
    ],
)
def test_precedence_is_env_over_traitlets_and_flags_over_both(
        workspace: Path, home: Path, env: dict[str, str], traitlets: dict[str, Any],
        flags: dict[str, Any], expected: int) -> None:
    request = RunRequest(task="Do it.", flags={"workdir": str(workspace), **flags},
                         traitlets=traitlets, env={"MERCURY_HOME": str(home), **env})
    planned = resolve(request)
    assert isinstance(planned, PlannedRun)
    assert planned.config.max_steps == expected
    assert planned.config.workdir == workspace


@pytest.mark.parametrize(
    ("env", "flags", "mode", "rules"),
    [
        pytest.param({}, {}, "edits", (), id="default-edits"),
        pytest.param({"MERCURY_PERMISSIONS": "ask", "MERCURY_ALLOW": "ls*, pytest*"}, {},
                     "ask", ("ls*", "pytest*"), id="env"),
        pytest.param({"MERCURY_PERMISSIONS": "ask"},
                     {"permissions": "auto", "allow": ["pip install x", "pip install x"]},
                     "auto", ("pip install x",), id="flags-over-env"),
    ],
)
def test_permissions_resolve_through_the_one_door(
        workspace: Path, home: Path, env: dict[str, str], flags: dict[str, Any], mode: str,
        rules: tuple[str, ...]) -> None:
    request = RunRequest(task="Do it.", flags={"workdir": str(workspace), **flags},
                         env={"MERCURY_HOME": str(home), **env})
    planned = resolve(request)
    assert isinstance(planned, PlannedRun)
    assert (planned.config.permissions, planned.config.allow) == (mode, rules)


def test_an_unknown_permission_mode_is_refused(workspace: Path, home: Path) -> None:
    refused = resolve(RunRequest(task="x", flags={"workdir": str(workspace),
                                                  "permissions": "yolo"},
                                 env={"MERCURY_HOME": str(home)}))
    assert isinstance(refused, Refusal) and refused.kind == "bad-settings"
    assert "permissions" in (refused.value or "")


@pytest.mark.parametrize(
    ("request_of", "kind", "value"),
    [
        pytest.param(lambda ws: RunRequest(task="  \n"), "empty-task", None, id="empty-task"),
        pytest.param(lambda ws: RunRequest(task="x", flags={"max_steps": 0}), "bad-max-steps",
                     "0", id="zero-steps"),
        pytest.param(lambda ws: RunRequest(task="x", flags={"max_steps": -3}), "bad-max-steps",
                     "-3", id="negative-steps"),
        pytest.param(lambda ws: RunRequest(task="x", flags={"max_steps": 1001}),
                     "bad-max-steps", "1001", id="steps-over-the-config-range"),
        pytest.param(lambda ws: RunRequest(resume=True, task_id="abcdef123456",
                                           flags={"max_steps": -(2**64)},
                                           flags_over_config=False),
                     "bad-max-steps", None, id="a-continues-steps-too"),
        pytest.param(lambda ws: RunRequest(task="x", flags={"workdir": str(ws / "nope")}),
                     "bad-workdir", "nope", id="flag-workdir-missing"),
        pytest.param(lambda ws: RunRequest(task="x", env={"MERCURY_WORKDIR": str(ws / "gone")}),
                     "bad-workdir", "gone", id="env-workdir-missing"),
        pytest.param(lambda ws: RunRequest(task="x", flags={"workdir": str(ws)},
                                           env={"MERCURY_MAX_STEPS": "lots"}),
                     "bad-settings", "max_steps", id="env-steps-not-a-number"),
        pytest.param(lambda ws: RunRequest(task="x", flags={"workdir": str(ws),
                                                            "model": "openai/gpt-4o"},
                                           env={}, refuse_missing_key=True),
                     "missing-key", "no API key for the model openai/gpt-4o", id="missing-key"),
        pytest.param(lambda ws: RunRequest(task="x", flags={"workdir": str(ws),
                                                            "sandbox": "workspace-write"},
                                           env={"MERCURY_BWRAP_PATH": str(ws / "no-bwrap")}),
                     "no-sandbox", "no-bwrap", id="sandbox-without-bwrap"),
        pytest.param(lambda ws: RunRequest(task="x", flags={"workdir": str(ws)},
                                           env={"MERCURY_SANDBOX": "workspace-write",
                                                "MERCURY_BWRAP_PATH": str(ws / "no-bwrap")}),
                     "no-sandbox", "no-bwrap", id="env-sandbox-without-bwrap"),
        pytest.param(lambda ws: RunRequest(resume=True, task_id="abcdef123456",
                                           flags={"workdir": str(ws)}),
                     "unknown-task", None, id="continue-unknown-id"),
        pytest.param(lambda ws: RunRequest(resume=True, flags={"workdir": str(ws)}),
                     "nothing-to-continue", None, id="continue-nothing-paused"),
    ],
)
def test_each_check_refuses_with_its_kind(workspace: Path, home: Path, request_of: Any,
                                          kind: str, value: str | None,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    request: RunRequest = request_of(workspace)
    if request.env is None:
        request = RunRequest(**{**request.__dict__, "env": {"MERCURY_HOME": str(home)}})
    else:
        request = RunRequest(**{**request.__dict__,
                                "env": {"MERCURY_HOME": str(home), **request.env}})
    refused = resolve(request)
    assert isinstance(refused, Refusal), refused
    assert refused.kind == kind
    if value is not None:
        assert value in (refused.value or "")


@pytest.mark.parametrize(
    ("name", "within", "kind"),
    [
        pytest.param("ws", None, None, id="a-folder"),
        pytest.param("ws", "ws", None, id="the-root-itself"),
        pytest.param("nope", None, "bad-workdir", id="missing"),
        pytest.param("a" * 300, None, "bad-workdir", id="name-too-long"),
        pytest.param("a\x00b", None, "bad-workdir", id="nul"),
        pytest.param("\ud800", None, "bad-workdir", id="lone-surrogate"),
        pytest.param("loop", None, "bad-workdir", id="link-loop"),
        pytest.param("file.txt", None, "bad-workdir", id="a-file"),
        pytest.param(".", "ws", "outside-root", id="outside"),
        pytest.param("no-such-folder", "ws", "outside-root",
                     id="outside-and-missing-says-only-outside"),
        pytest.param("ws/link-out", "ws", "outside-root", id="a-link-out-of-the-root"),
    ],
)
def test_the_one_workdir_check_never_raises(workspace: Path, name: str, within: str | None,
                                            kind: str | None) -> None:
    base = workspace.parent
    (base / "loop").symlink_to(base / "loop")
    (base / "file.txt").write_text("x", encoding="utf-8")
    (workspace / "link-out").symlink_to(base)
    refused = workdir_refusal(base / name, None if within is None else base / within)
    assert (refused.kind if refused is not None else None) == kind


def test_a_missing_key_is_left_to_the_loop_unless_asked(workspace: Path, home: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    planned = resolve(RunRequest(task="x", flags={"workdir": str(workspace),
                                                  "model": "openai/gpt-4o"},
                                 env={"MERCURY_HOME": str(home)}))
    assert isinstance(planned, PlannedRun)


def test_a_given_model_replaces_the_chain_once(workspace: Path) -> None:
    model = ScriptedModel([Turn(text="hi")], name="scripted/one")
    config = MercuryConfig(workdir=workspace, model="openai/gpt-4o", fallbacks=("x/y",))
    planned = resolve(RunRequest(task="x", config=config, model=model, recorded=False))
    assert isinstance(planned, PlannedRun)
    assert planned.config.model_chain == ("scripted/one",)
    assert planned.handle is None


async def test_submit_wraps_the_task_once_and_tells_subscribers(workspace: Path,
                                                                home: Path) -> None:
    model = ScriptedModel([Turn(text="Hello.")], name="scripted/hello")
    config = MercuryConfig(workdir=workspace, home=home, mode="chat")
    run = submit(RunRequest(task="Say hello.", config=config, model=model))
    assert not isinstance(run, Refusal)
    seen: list[Any] = []
    run.on_done(lambda done: seen.append(done.summary()))
    assert run.summary().text == "Say hello." and not run.summary().done
    outcome = await run.outcome()
    await asyncio.sleep(0)  # done callbacks run on the next loop iteration
    assert outcome.task_id == run.task_id
    assert [(s.task_id, s.done) for s in seen] == [(run.task_id, True)]


def test_a_continue_that_asks_for_a_missing_sandbox_is_refused_before_its_claim(
        workspace: Path, home: Path) -> None:
    from mercury_nb.ledger.records import TaskHeader
    from mercury_nb.runs import ledger_for

    handle = ledger_for(MercuryConfig(workdir=workspace, home=home), lambda line: None)
    assert handle is not None
    header = TaskHeader("5a4db0c00001", "Build it", str(workspace.resolve()), ("openai/a",))
    handle.ledger.start_task(header)
    handle.ledger.finish_task(header, status="paused", verdict="steps-exhausted",
                              banner="paused", blocker=None, changes="[]", evidence="[]",
                              steps=2)
    env = {"MERCURY_HOME": str(home), "MERCURY_BWRAP_PATH": str(workspace / "no-bwrap")}
    refused = resolve(RunRequest(resume=True, flags={"workdir": str(workspace),
                                                     "sandbox": "workspace-write"},
                                 env=env, handle=handle))
    assert isinstance(refused, Refusal) and refused.kind == "no-sandbox", refused
    record = handle.ledger.get("5a4db0c00001")
    assert record is not None and record.status == "paused"  # not claimed: it still continues
    planned = resolve(RunRequest(resume=True, flags={"workdir": str(workspace)}, env=env,
                                 handle=handle))
    assert isinstance(planned, PlannedRun) and planned.task_id == "5a4db0c00001"
