"""The narration guard over real HTTP: litellm -> loopback server, two model names (a, b)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mercury_nb.agent.events import AgentEvent, Notice
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.banners import TASK_COMPLETE, WORK_NOT_STARTED
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.escalation.guard_texts import (
    FORCED_CHOICE_FALLBACK_DIRECTIVE,
    FORCED_ROUND_DIRECTIVE,
    GROUNDING_HEADER,
    SECOND_CYCLE_NOTICE,
    guard_round_notice,
    wake_up_directive,
)
from mercury_nb.testing import HttpError, LoopbackServer, Turn, call

TASK = "Build a todo CLI in todo.py with tests"
NARRATION = "Building the todo CLI now. I'll create todo.py and its tests next."
GROUNDING_START = GROUNDING_HEADER.split("{cwd}")[0]
THINKING_400 = "tool_choice 'required' is not supported when thinking is enabled"
TEST_TODO = "from todo import add\n\n\ndef test_add():\n    assert add([], 'x') == ['x']\n"
TODO = "def add(items, item):\n    return [*items, item]\n"


def chain_config(tmp_path: Path, server: LoopbackServer, *names: str, **kw: Any) -> MercuryConfig:
    chain = [f"openai/{name}" for name in names]
    values: dict[str, Any] = {"retry_base_s": 0.0, "retry_max_s": 0.05, "request_timeout_s": 30}
    values.update(kw)
    return MercuryConfig(permissions="auto",
                         workdir=tmp_path, model=chain[0], fallbacks=tuple(chain[1:]),
                         api_base=server.url, api_key="sk-test", **values)


def tools_of(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


def user_texts(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "user"]


def notices(events: list[AgentEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


def builds_it() -> list[Turn]:
    """A round that lands the work and verifies it."""
    return [
        Turn(tool_calls=(call("create_file", path="todo.py", content=TODO),
                         call("create_file", path="test_todo.py", content=TEST_TODO))),
        Turn(tool_calls=(call("run_command", command="python -m pytest -q test_todo.py"),)),
        Turn(text="todo.py is in, with a passing test."),
    ]


async def test_narration_forces_grounded_rounds_rotates_wakes_up_and_pauses_with_blocker(
    tmp_path: Path, loopback_server
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "notes.md").write_text("ideas\n")
    failing_edit = call("edit_file", path="todo.py", old_text="pass", new_text="return 1")
    server = loopback_server({
        # turn 0 and the odd rounds 1, 3, 5, 7, 9 (round 3 tries a mutation that fails)
        "a": [Turn(text=NARRATION), Turn(text="I will write the files now."),
              Turn(tool_calls=(failing_edit,)), Turn(text="todo.py is not there yet."),
              *(Turn(text=f"Still planning, part {n}.") for n in (5, 7, 9))],
        # the even rounds 2, 4, 6 (the wake-up), 8, 10
        "b": [Turn(text=f"Let me outline round {n} first.") for n in (2, 4, 6, 8, 10)],
    })
    events: list[AgentEvent] = []
    outcome = await run_new_session(TASK, chain_config(tmp_path, server, "a", "b"),
                                    on_event=events.append)

    a, b = server.requests_for("a"), server.requests_for("b")
    assert (len(a), len(b)) == (7, 5)
    forced = [a[1], b[0], a[2], b[1], a[4], b[2], a[5], b[3], a[6], b[4]]  # rounds 1..10
    for body in forced:
        assert body["tool_choice"] == "required"
        assert body["tools"] == a[0]["tools"]  # the same tools array: the prefix stays cached
    assert a[3]["tool_choice"] == "auto" and "read_file" in tools_of(a[3])  # round 3, step 2

    first_round = user_texts(a[1])
    assert first_round[-1] == FORCED_ROUND_DIRECTIVE
    grounding = first_round[-2]
    assert grounding.startswith(GROUNDING_START + str(tmp_path))
    assert grounding.splitlines()[1:] == ["dir: data", "file: notes.md"]
    assert sum(t.startswith(GROUNDING_START) for t in user_texts(b[0])) == 1  # round 2: none new

    wake_up = user_texts(b[2])  # round 6
    assert wake_up[-1] == wake_up_directive(5)
    assert wake_up[-2].startswith(GROUNDING_START)
    assert sum(t.startswith(GROUNDING_START) for t in wake_up) == 2

    # "of 4" while neither model has made a tool call (two forcings each answered in prose
    # would end the task), "of 5" once a has (round 3)
    assert notices(events) == [guard_round_notice(n, 4) for n in (1, 2, 3)] + [
        guard_round_notice(n, 5) for n in (4, 5)] + [SECOND_CYCLE_NOTICE] * 5
    assert outcome.status == "paused"
    assert outcome.banner.splitlines() == [
        WORK_NOT_STARTED,
        "What blocked it: edit_file: Error: no such file: todo.py — use create_file to create it",
    ]
    assert outcome.banner.startswith(
        'I couldn\'t get started on this one yet — send "continue" and I\'ll try again.')
    assert outcome.providers == {}
    assert not (tmp_path / "todo.py").exists()


async def test_rotation_starts_at_the_provider_that_served_the_turn(
    tmp_path: Path, loopback_server
) -> None:
    server = loopback_server({
        "a": [Turn(fault=HttpError(503, message="overloaded"))],
        "b": [Turn(text=NARRATION), *builds_it()],
    })
    events: list[AgentEvent] = []
    config = chain_config(tmp_path, server, "a", "b", retry_attempts=0)
    outcome = await run_new_session(TASK, config, on_event=events.append)
    b = server.requests_for("b")
    assert len(server.requests_for("a")) == 1
    assert b[1]["tool_choice"] == "required" and b[1]["tools"] == b[0]["tools"]
    assert b[2]["tool_choice"] == "auto"
    assert notices(events)[1] == guard_round_notice(1, 4)  # two models, two forcings each
    assert notices(events)[0].startswith("⚠ openai/a: HTTP 503")
    assert outcome.status == "completed", outcome.banner
    assert outcome.banner.startswith(TASK_COMPLETE)
    assert list(outcome.providers) == ["openai/a"]
    assert outcome.providers["openai/a"].startswith("HTTP 503")


async def test_refused_forced_choice_falls_back_to_auto_and_still_acts(
    tmp_path: Path, loopback_server
) -> None:
    server = loopback_server({
        "a": [Turn(text=NARRATION), Turn(fault=HttpError(400, message=THINKING_400)),
              *builds_it()],
    })
    events: list[AgentEvent] = []
    outcome = await run_new_session(TASK, chain_config(tmp_path, server, "a", "b"),
                                    on_event=events.append)
    a = server.requests_for("a")
    assert [body["tool_choice"] for body in a[1:4]] == ["required", "auto", "auto"]
    assert a[2]["tools"] == a[0]["tools"]  # un-forced, the directive restricts, not the array
    assert user_texts(a[2])[-1] == FORCED_CHOICE_FALLBACK_DIRECTIVE
    assert (tmp_path / "todo.py").read_text() == TODO
    assert outcome.status == "completed", outcome.banner
    assert outcome.providers == {}, "a refused forced choice is not a provider failure"
    assert notices(events) == [guard_round_notice(1, 4)]  # two models, two forcings each
    assert server.requests_for("b") == []


async def test_reply_asking_the_user_does_not_start_the_guard(
    tmp_path: Path, loopback_server
) -> None:
    server = loopback_server({"a": [Turn(text="Should the CLI store todos in JSON or SQLite?")]})
    outcome = await run_new_session(TASK, chain_config(tmp_path, server, "a"))
    # a work task that ends by asking the user is a question to the user, never a completion
    assert outcome.status == "paused"
    assert outcome.banner.startswith(
        "I need your answer before I go on: Should the CLI store todos in JSON or SQLite?")
    assert outcome.blocker == "Should the CLI store todos in JSON or SQLite?"
    assert len(server.requests) == 1


async def test_chat_mode_never_starts_the_guard(tmp_path: Path, loopback_server) -> None:
    server = loopback_server({"a": [Turn(text=NARRATION)]})
    outcome = await run_new_session(TASK, chain_config(tmp_path, server, "a", mode="chat"))
    assert outcome.banner == "Response delivered · no file changes (snapshot-verified)"
    assert len(server.requests) == 1
