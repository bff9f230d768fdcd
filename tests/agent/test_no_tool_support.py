"""A model or server that does not take tools, over real HTTP (openai SDK -> loopback, issue 16.3).

The replays of SmolLM2 on llama.cpp's default template: ``/props`` says
``chat_template_caps.supports_tools: false``, and every reply is prose, forced or not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import AgentEvent, Notice
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.failure_banners import NO_TOOLS_FIX
from mercury_nb.testing import Turn, call, llama_cpp_props

TASK = "Create hello.py that prints hello world, and run it."
CODE_IN_PROSE = (
    '```python\n# hello.py\ndef hello_world():\n    print("Hello, World!")\n\nhello_world()\n```'
    '\n\nThis will print "Hello, World!" to the console when you run `python hello.py`.'
)
STILL_PROSE = '```python\n# create_file()\n# create_file(empty_buffer, "Hello, World!")\n```'


def config_for(tmp_path: Path, server: Any, **kw: Any) -> MercuryConfig:
    values: dict[str, Any] = {"retry_base_s": 0.0, "retry_max_s": 0.05, "request_timeout_s": 30}
    values.update(kw)
    return MercuryConfig(permissions="auto",
                         workdir=tmp_path, model="smollm2", api_base=server.url, **values)


WORK = "Create hello.py with a hello() function and a pytest test for it, then make the tests pass."
HELLO = "def hello():\n    return 'hello world'\n"
TEST = "from hello import hello\n\n\ndef test_hello():\n    assert hello() == 'hello world'\n"


def does_the_work() -> list[Turn]:
    return [
        Turn(tool_calls=(call("create_file", path="hello.py", content=HELLO),
                         call("create_file", path="test_hello.py", content=TEST))),
        Turn(tool_calls=(call("run_command", command="python -m pytest -q test_hello.py"),)),
        Turn(text="hello.py is in, with a passing test."),
    ]


def guard_notices(events: list[AgentEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice) and e.kind == "guard-round"]


async def test_prose_answers_to_forced_tool_choice_end_within_two_rounds(
    tmp_path: Path, loopback_server
) -> None:
    # the server says nothing of its caps: the behaviour shows it
    server = loopback_server([Turn(text=CODE_IN_PROSE), Turn(text=STILL_PROSE),
                              Turn(text=STILL_PROSE)], routes=llama_cpp_props(8192))
    events: list[AgentEvent] = []
    outcome = await run_new_session(TASK, config_for(tmp_path, server), on_event=events.append)

    choices = [body.get("tool_choice") for body in server.requests]
    assert choices == ["auto", "required", "required"]
    assert len(guard_notices(events)) == 2
    assert outcome.status == "failed" and not outcome.resumable
    lines = outcome.banner.splitlines()
    assert lines[0].startswith("I can't do this task with smollm2: it does not take tools")
    assert lines[1] == ('How I know: it answered 2 forced tool calls (tool_choice "required") '
                        "with prose and no call.")
    assert lines[2] == NO_TOOLS_FIX
    assert "continue" not in outcome.banner.lower()
    assert outcome.blocker == (
        "smollm2 does not take tools (it answered 2 forced tool calls with prose)")
    assert outcome.answer is None
    assert not (tmp_path / "hello.py").exists()


async def test_a_server_reporting_no_tools_ends_without_a_guard_round(
    tmp_path: Path, loopback_server
) -> None:
    # the window is configured, so /props is asked for the tool caps alone
    server = loopback_server([Turn(text=CODE_IN_PROSE)],
                             routes=llama_cpp_props(2048, supports_tools=False,
                                                    supports_tool_calls=False))
    events: list[AgentEvent] = []
    outcome = await run_new_session(TASK, config_for(tmp_path, server, context_window=8192),
                                    on_event=events.append)

    assert len(server.requests) == 1, "no guard round"
    assert server.get_requests.count("/props") == 1
    assert guard_notices(events) == []
    assert outcome.status == "failed" and not outcome.resumable
    assert outcome.banner.splitlines()[1] == (
        "How I know: its server reports that the chat template has no tool support "
        "(chat_template_caps in /props).")
    assert NO_TOOLS_FIX in outcome.banner


async def test_a_question_on_that_server_is_still_answered(
    tmp_path: Path, loopback_server
) -> None:
    props = llama_cpp_props(8192, supports_tools=False)
    server = loopback_server([Turn(text="2 + 2 = 4")], routes=props)
    outcome = await run_new_session("What is 2+2?", config_for(tmp_path, server))
    assert outcome.status == "completed", outcome.banner
    assert outcome.banner == "Response delivered · no file changes (snapshot-verified)"
    assert outcome.answer == "2 + 2 = 4"

    chat = loopback_server([Turn(text="Here is hello.py:\n" + CODE_IN_PROSE)], routes=props)
    outcome = await run_new_session(TASK, config_for(tmp_path, chat, mode="chat"))
    assert outcome.status == "completed", outcome.banner
    assert outcome.answer is not None and "hello_world" in outcome.answer


async def test_a_server_that_makes_tool_calls_is_believed_over_its_report(
    tmp_path: Path, loopback_server
) -> None:
    server = loopback_server([
        Turn(tool_calls=(call("list_dir", path="."),)), Turn(text=CODE_IN_PROSE),
        *does_the_work(),  # guard round 1
    ], routes=llama_cpp_props(8192, supports_tools=False))
    outcome = await run_new_session(WORK, config_for(tmp_path, server))
    assert outcome.status == "completed", outcome.banner
    assert (tmp_path / "hello.py").exists()


async def test_a_non_mutating_call_on_a_forced_step_fails_the_round(
    tmp_path: Path, loopback_server
) -> None:
    (tmp_path / "notes.md").write_text("hello\n")
    server = loopback_server([
        Turn(text=CODE_IN_PROSE),
        # round 1: the forced step reads a file; the round ends there, failed
        Turn(tool_calls=(call("read_file", path="notes.md"),)),
        *does_the_work(),  # round 2
    ])
    events: list[AgentEvent] = []
    outcome = await run_new_session(WORK, config_for(tmp_path, server), on_event=events.append)

    assert outcome.status == "completed", outcome.banner
    assert [body.get("tool_choice") for body in server.requests] == [
        "auto", "required", "required", "auto", "auto"]
    assert len(guard_notices(events)) == 2
    tools = [body["tools"] for body in server.requests]
    assert all(t == tools[0] for t in tools), "one tools array for every request"


# --- tool support is known before the final reply is read (review 5, 7) ------------------

APOLOGY = "I'm sorry, but I can't create files. Here is the code:\n" + CODE_IN_PROSE
NO_CALLS = "I'm sorry, but I cannot call functions."
NO_TOOLS_PROPS = llama_cpp_props(8192, supports_tools=False, supports_tool_calls=False)


def assert_no_tools_failure(outcome: Any) -> None:
    assert outcome.status == "failed" and not outcome.resumable, outcome.banner
    assert outcome.banner.startswith("I can't do this task with smollm2: it does not take tools")
    assert NO_TOOLS_FIX in outcome.banner
    assert "continue" not in outcome.banner.lower()


@pytest.mark.parametrize("reply", [
    pytest.param(APOLOGY, id="apology"),
    pytest.param("Sure! What should the greeting say?", id="question"),
])
async def test_a_prose_blocker_or_question_on_a_server_without_tools_is_no_pause(
    reply: str, tmp_path: Path, loopback_server
) -> None:
    server = loopback_server([Turn(text=reply)], routes=NO_TOOLS_PROPS)
    outcome = await run_new_session(TASK, config_for(tmp_path, server))
    assert len(server.requests) == 1
    assert_no_tools_failure(outcome)


@pytest.mark.parametrize("forced_reply", [
    pytest.param(Turn(text=NO_CALLS), id="apology"),
    pytest.param(Turn(text="Which file name should I use?"), id="question"),
    pytest.param(Turn(text=STILL_PROSE + "x" * 200, finish_reason="length"), id="cut-by-length"),
])
async def test_forced_rounds_answered_in_prose_end_within_two_rounds(
    forced_reply: Turn, tmp_path: Path, loopback_server
) -> None:
    # the server says nothing of its caps; every forced round gets prose
    server = loopback_server([Turn(text=CODE_IN_PROSE), forced_reply, forced_reply],
                             routes=llama_cpp_props(8192))
    outcome = await run_new_session(TASK, config_for(tmp_path, server))
    assert [body.get("tool_choice") for body in server.requests] == [
        "auto", "required", "required"]
    assert_no_tools_failure(outcome)
    assert "it answered 2 forced tool calls" in outcome.banner


async def test_the_guard_reaches_the_model_with_tools_after_one_without(
    tmp_path: Path, loopback_server
) -> None:
    server = loopback_server({"a": [Turn(text=CODE_IN_PROSE), Turn(text=NO_CALLS)],
                              "b": does_the_work()})
    config = config_for(tmp_path, server).with_changes(model="openai/a",
                                                       fallbacks=("openai/b",))
    outcome = await run_new_session(WORK, config)
    assert outcome.status == "completed", outcome.banner
    assert len(server.requests_for("b")) == 3
    assert (tmp_path / "hello.py").exists()


async def test_a_narrated_i_cannot_on_a_model_with_tools_gets_the_guard(
    tmp_path: Path, loopback_server
) -> None:
    server = loopback_server([Turn(text="I can't access your files, so I can't create them."),
                              *does_the_work()])
    outcome = await run_new_session(WORK, config_for(tmp_path, server))
    assert outcome.status == "completed", outcome.banner
    assert server.requests[1].get("tool_choice") == "required"
