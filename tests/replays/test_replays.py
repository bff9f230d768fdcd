"""Every recorded run of the real small model, replayed over loopback HTTP, ends honestly.

Each test plays one recording (``data/``, see its README) through the real openai-SDK
transport against the loopback server, which also answers ``GET /props`` the way that run's
server did, and asserts the honest ending the completion contract asks for, in observable
facts: the status, what the banner and blocker say or never say, how many forced requests
were sent. Where the agent asks for more than was recorded, the stuck small model repeats
its last reply (``repeat_last``), except where noted.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.escalation.guard_texts import GROUNDING_HEADER
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.testing.replay import (
    Recording,
    RequestShape,
    load_recording,
    no_tools_props,
    observed_on,
    replay_server,
    tools_props,
)
from mercury_nb.testing.script import OnExhausted

PENDING: dict[str, str] = {}
"""Runs whose honest ending is not reached yet (none): their tests are expected to fail."""

DATA = Path(__file__).parent / "data"
COMPLETE = "✓ Task complete"
RESUME_PROMISE = re.compile(r'send "continue"', re.IGNORECASE)
SMALL_WINDOW_ENDING = re.compile(
    r"this model's 2,048-token window cannot hold the tool definitions \(about [\d,]+ tokens\)")
README = "# calc\nA tiny command-line calculator.\nRelease token: sk-test-abcdefghijklmnop\n"


def _run(name: str) -> Any:
    """The run's name as a test parameter, marked expected-to-fail while it is PENDING."""
    if name in PENDING:
        return pytest.param(name, id=name, marks=pytest.mark.xfail(
            reason=f"fixed on another branch: {PENDING[name]}", strict=False))
    return pytest.param(name, id=name)


@dataclass
class Replayed:
    recording: Recording
    outcome: TaskOutcome
    observed: list[RequestShape]
    get_requests: list[str]

    @property
    def forced(self) -> list[RequestShape]:
        return [shape for shape in self.observed if shape.forced]

    @property
    def said(self) -> str:
        """Everything the ending says to the user: the banner and the blocker."""
        return "\n".join((self.outcome.banner, self.outcome.blocker or ""))


def _workspace(root: Path, recording: Recording) -> Path:
    if "readme" in recording.run:
        (root / "README.md").write_text(README)
    if "git" in recording.run or "git-verified" in str(recording.outcome_then.get("banner")):
        for args in (["init", "-q"], ["add", "-A"],
                     ["-c", "user.email=t@example.com", "-c", "user.name=t",
                      "commit", "-q", "--allow-empty", "-m", "start"]):
            subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


async def replay(name: str, root: Path, *, props: dict[str, Any] | None = None,
                 on_exhausted: OnExhausted = "repeat_last", **config: Any) -> Replayed:
    """Run the recording's task against its replies served over loopback HTTP."""
    recording = load_recording(DATA / f"{name}.json")
    workspace = _workspace(root, recording)
    with replay_server(recording, props, on_exhausted, workspace=workspace) as server:
        settings = MercuryConfig(workdir=workspace, mode=recording.mode,  # type: ignore[arg-type]
                                 model="smollm2", api_base=server.url, **config)
        outcome = await run_new_session(recording.task, settings)
        assert server.errors == []
    return Replayed(recording, outcome, observed_on(server), list(server.get_requests))


def assert_no_false_completion(replayed: Replayed) -> None:
    assert replayed.outcome.status != "completed", replayed.outcome.banner
    assert COMPLETE not in replayed.outcome.banner
    assert "✓ Verified" not in replayed.outcome.banner


def assert_no_resume_promise(replayed: Replayed) -> None:
    assert not RESUME_PROMISE.search(replayed.said), replayed.said


# --- default template: the server takes no tools ---------------------------------------


@pytest.mark.parametrize("run", [_run("r1_hello"), _run("r2_calc")])
@pytest.mark.parametrize("props_say", ["no-tools", "tools"])
async def test_a_server_that_drops_tools_fails_naming_jinja(
    run: str, props_say: str, tmp_path: Path
) -> None:
    """/props saying so ends it at once; a server claiming tools it ignores, within 2
    forced rounds. Never 10 rounds, never a "continue" that cannot help."""
    props = no_tools_props(8192) if props_say == "no-tools" else tools_props(8192)
    replayed = await replay(run, tmp_path, props=props)
    assert replayed.outcome.status == "failed", replayed.outcome.banner
    assert "--jinja" in replayed.said
    assert len(replayed.forced) <= (0 if props_say == "no-tools" else 2)
    assert_no_false_completion(replayed)
    assert_no_resume_promise(replayed)


@pytest.mark.parametrize("run", [_run("r7b_ctx2048_window8192")])
async def test_a_configured_window_does_not_hide_the_missing_tools(
    run: str, tmp_path: Path
) -> None:
    replayed = await replay(run, tmp_path, context_window=8192)
    assert replayed.outcome.status == "failed", replayed.outcome.banner
    assert "--jinja" in replayed.said and len(replayed.forced) <= 2
    assert "conversation is still too large" not in replayed.said
    assert_no_resume_promise(replayed)


@pytest.mark.parametrize("run", [_run("r7_ctx2048")])
async def test_a_window_too_small_for_the_tools_says_so(run: str, tmp_path: Path) -> None:
    replayed = await replay(run, tmp_path, on_exhausted="fail")
    assert SMALL_WINDOW_ENDING.search(replayed.said), replayed.said
    assert "the conversation" not in replayed.said
    assert replayed.outcome.status == "failed" and not replayed.outcome.resumable
    assert_no_resume_promise(replayed)
    # /props also says no tools: a larger window alone would only meet that failure next,
    # so the banner names both, the missing tools first
    said = replayed.said
    assert "does not take tools" in said and "--jinja" in said
    window_clause = SMALL_WINDOW_ENDING.search(said)
    assert window_clause is not None and said.index("does not take tools") < window_clause.start()


@pytest.mark.parametrize("run", [_run("r3_chat")])
async def test_a_chat_question_is_answered_as_recorded(run: str, tmp_path: Path) -> None:
    replayed = await replay(run, tmp_path, on_exhausted="fail")
    recorded = replayed.recording
    assert replayed.outcome.status == "completed"
    assert replayed.outcome.banner == "Response delivered · no file changes (snapshot-verified)"
    assert replayed.outcome.answer == recorded.turns[0].text
    [sent] = replayed.observed
    [then] = recorded.requests
    assert (sent.tool_choice, sent.messages, sent.last) == (then.tool_choice, then.messages,
                                                             then.last)
    assert set(then.tools) <= set(sent.tools)
    assert replayed.get_requests == ["/props"]


@pytest.mark.parametrize("run", [_run("r4_readme")])
async def test_a_question_about_readme_gets_readme_read_first(run: str, tmp_path: Path) -> None:
    replayed = await replay(run, tmp_path, on_exhausted="fail")
    [sent] = replayed.observed
    grounding = sent.last
    assert sent.messages == replayed.recording.requests[0].messages + 1  # the grounding
    assert grounding is not None and grounding["content"].startswith(GROUNDING_HEADER[:30])
    assert "A tiny command-line calculator." in grounding["content"]
    assert "sk-test-abcdefghijklmnop" not in grounding["content"]
    assert replayed.outcome.status == "completed"
    assert replayed.outcome.banner == "Response delivered · no file changes (git-verified)"
    assert replayed.outcome.unread == []


@pytest.mark.parametrize("run", [_run("r4_readme")])
async def test_an_answer_about_readme_unread_says_so(run: str, tmp_path: Path) -> None:
    replayed = await replay(run, tmp_path, on_exhausted="fail", answer_grounding_files=0)
    assert replayed.observed[0].messages == replayed.recording.requests[0].messages
    assert replayed.outcome.banner.splitlines() == [
        "Response delivered · no file changes (git-verified)",
        "answered without reading README.md",
    ]
    assert replayed.outcome.unread == ["README.md"]


# --- tool-forcing server: real (silly) tool calls --------------------------------------


@pytest.mark.parametrize("run", [_run("r9_shim_hello"), _run("r13_shim_hello2")])
async def test_a_junk_file_is_not_hello_py(run: str, tmp_path: Path) -> None:
    replayed = await replay(run, tmp_path)
    assert_no_false_completion(replayed)
    assert "hello.py was not created" in replayed.said
    assert not (tmp_path / "hello.py").exists()


@pytest.mark.parametrize("run", [_run("r10_shim_calc"), _run("r12_shim_calc_git")])
async def test_a_junk_file_is_not_calc_py_and_its_test(run: str, tmp_path: Path) -> None:
    replayed = await replay(run, tmp_path)
    assert_no_false_completion(replayed)
    assert "calc.py" in replayed.said and "not created" in replayed.said
    assert replayed.outcome.evidence == [] or all(
        e.exit_code != 0 for e in replayed.outcome.evidence)


@pytest.mark.parametrize("run", [_run("r14a_run_sleep_as_chat")])
async def test_a_command_to_run_is_work_not_a_question(run: str, tmp_path: Path) -> None:
    replayed = await replay(run, tmp_path)
    assert replayed.recording.task == "Run the shell command: sleep 300"
    assert "Response delivered" not in replayed.outcome.banner
    assert replayed.outcome.status != "completed"
    assert replayed.forced, "the prose reply was taken as the answer; no step was forced"


@pytest.mark.parametrize("run", [_run("r14b_shim_sleep_task")])
async def test_a_junk_csv_does_not_run_the_command(run: str, tmp_path: Path) -> None:
    replayed = await replay(run, tmp_path)
    assert_no_false_completion(replayed)
    assert not any("sleep 300" in e.command and e.exit_code == 0
                   for e in replayed.outcome.evidence)


def test_every_recording_has_a_test() -> None:
    """A recording added to data/ without a test here fails this test."""
    covered = {"r1_hello", "r2_calc", "r3_chat", "r4_readme", "r7_ctx2048",
               "r7b_ctx2048_window8192", "r9_shim_hello", "r10_shim_calc",
               "r12_shim_calc_git", "r13_shim_hello2", "r14a_run_sleep_as_chat",
               "r14b_shim_sleep_task"}
    assert {path.stem for path in DATA.glob("*.json")} == covered
    assert set(PENDING) <= covered
