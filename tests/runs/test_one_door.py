"""Every front end reaches a run through Runner.submit: patch the door, and each one knocks."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.runs import Refusal, RunRequest
from mercury_nb.runs.request import SubagentRequest
from mercury_nb.runs.runner import Runner, runner
from mercury_nb.testing import Turn, call

SPIED = "spied: the door refused, nothing ran"


@pytest.fixture
def knocks(monkeypatch: pytest.MonkeyPatch) -> list[RunRequest]:
    """Replace the one entry with a spy that records each request and refuses it."""
    seen: list[RunRequest] = []

    def spy(self: Runner, request: RunRequest, *,
            loop: asyncio.AbstractEventLoop | None = None) -> Refusal:
        seen.append(request)
        return Refusal(SPIED, kind="no-ledger")

    monkeypatch.setattr(Runner, "submit", spy)
    return seen


@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch, home: Path) -> Iterator[InteractiveShell]:
    for name in MercuryConfig.model_fields:
        if name != "home":
            monkeypatch.delenv("MERCURY_" + name.upper(), raising=False)
    shell = InteractiveShell.instance()
    shell.config.pop("Mercury", None)
    shell.run_line_magic("load_ext", "mercury_nb")
    yield shell
    shell.run_line_magic("unload_ext", "mercury_nb")
    shell.config.pop("Mercury", None)


def test_a_cell_knocks_once_with_its_raw_flags(ip: InteractiveShell, knocks: list[RunRequest],
                                               tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_cell_magic("mercury", f"--workdir {tmp_path} --max-steps 4", "Write a.txt.")
    [request] = knocks
    assert (request.task, request.resume) == ("Write a.txt.", False)
    assert request.flags["max_steps"] == 4 and request.flags["workdir"] == str(tmp_path)
    assert SPIED in capsys.readouterr().out


class CountedText(str):
    """A cell body that counts how often it (or a stripped copy) is stripped."""

    strips = 0

    def strip(self, chars: str | None = None) -> CountedText:
        CountedText.strips += 1
        return CountedText(str.strip(self, chars))


def test_a_cell_body_is_stripped_once_by_the_request(ip: InteractiveShell,
                                                     knocks: list[RunRequest],
                                                     tmp_path: Path) -> None:
    CountedText.strips = 0
    ip.run_cell_magic("mercury", f"--workdir {tmp_path}", CountedText("\n  Write a.txt.  \n"))
    [request] = knocks
    assert request.task == "Write a.txt." and CountedText.strips == 1


def test_a_blank_cell_is_the_doors_empty_task_as_a_usage_error(
        ip: InteractiveShell, tmp_path: Path) -> None:
    result = ip.run_cell(f"%%mercury --workdir {tmp_path}\n   \n\t\n")
    assert isinstance(result.error_in_exec, UsageError)
    assert str(result.error_in_exec).startswith("%%mercury needs a task: write it on the lines")


def test_a_continue_cell_and_the_line_magic_knock_as_continues(
        ip: InteractiveShell, knocks: list[RunRequest], tmp_path: Path) -> None:
    ip.run_cell_magic("mercury", f"--workdir {tmp_path}", "continue abcdef123456, use pytest")
    ip.run_line_magic("mercury", f"continue abcdef --workdir {tmp_path}")
    assert [(r.resume, r.task_id, r.words) for r in knocks] == [
        (True, "abcdef123456", "use pytest"), (True, "abcdef", None)]


@pytest.mark.parametrize(
    ("argv", "resume"),
    [
        pytest.param(["run", "Write a.txt."], False, id="run"),
        pytest.param(["continue", "abcdef"], True, id="continue"),
    ],
)
def test_the_cli_knocks(knocks: list[RunRequest], home: Path, tmp_path: Path,
                        argv: list[str], resume: bool,
                        capsys: pytest.CaptureFixture[str]) -> None:
    from mercury_nb.cli import main

    assert main([*argv, "--workdir", str(tmp_path)]) == 2
    [request] = knocks
    assert request.resume is resume and request.refuse_missing_key
    assert SPIED in capsys.readouterr().err


async def test_the_library_call_knocks(knocks: list[RunRequest], tmp_path: Path) -> None:
    import mercury_nb

    with pytest.raises(ValueError, match="spied"):
        await mercury_nb.run_task("Say hi.", MercuryConfig(workdir=tmp_path))
    [request] = knocks
    assert request.task == "Say hi." and not request.recorded


async def test_delegate_task_knocks_with_a_subagent_request(
        monkeypatch: pytest.MonkeyPatch, home: Path, tmp_path: Path, scripted_model) -> None:
    """A running parent's delegate_task call reaches the door as a SubagentRequest (the spy
    lets every request through, so the parent runs and its model's call is a real one)."""
    seen: list[RunRequest | SubagentRequest] = []
    real = Runner.submit

    def spy(self: Runner, request: Any, *,
            loop: asyncio.AbstractEventLoop | None = None) -> Any:
        seen.append(request)
        return real(self, request, loop=loop)

    monkeypatch.setattr(Runner, "submit", spy)
    model = scripted_model([
        Turn(tool_calls=(call("delegate_task", task="  What is in the empty folder?  "),)),
        Turn(text="Nothing."),
        Turn(text="The folder is empty."),
    ])
    config = MercuryConfig(workdir=tmp_path, home=home, model=model.name, retry_base_s=0.0)
    outcome = await runner.run(RunRequest(task="Ask a helper", config=config,
                                               model=model))
    assert not isinstance(outcome, Refusal) and outcome.status == "completed", outcome
    parent, child = seen
    assert isinstance(parent, RunRequest) and parent.task == "Ask a helper"
    assert isinstance(child, SubagentRequest)
    assert (child.task, child.sub_id) == ("What is in the empty folder?",
                                          f"{outcome.task_id}.1")
    assert child.parent.task_id == outcome.task_id
