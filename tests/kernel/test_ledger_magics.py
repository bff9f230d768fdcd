"""``%mercury tasks | show | continue``, ``%%mercury continue`` and recovery at ``%load_ext``."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.kernel.ledger_magics import NothingToWait
from mercury_nb.ledger.access import close_all, open_ledger
from mercury_nb.ledger.owner import Owner
from mercury_nb.ledger.records import TaskHeader
from mercury_nb.ledger.texts import INTERRUPTED_BLOCKER, PAUSED_DUPLICATE
from mercury_nb.testing import Turn, call, register_scripted_model, unregister_scripted_model


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in MercuryConfig.model_fields:
        monkeypatch.delenv("MERCURY_" + name.upper(), raising=False)
    monkeypatch.delenv("MERCURY_PLAIN", raising=False)
    folder = tmp_path / "home"
    monkeypatch.setenv("MERCURY_HOME", str(folder))
    yield folder
    close_all()


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    ip = InteractiveShell.instance()
    ip.config.pop("Mercury", None)
    yield ip
    ip.run_line_magic("unload_ext", "mercury_nb")
    ip.config.pop("Mercury", None)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.fixture
def model_name() -> Iterator[str]:
    name = "scripted/ledger-magics"
    yield name
    unregister_scripted_model(name)


def dead_owner() -> Owner:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return Owner(pid=process.pid, token="gone")


def test_loading_pauses_tasks_of_dead_processes(home: Path, shell: InteractiveShell,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    ledger = open_ledger(home).ledger
    ledger.start_task(TaskHeader("deadbeef0001", "build it", "/ws", ("openai/a",)),
                      owner=dead_owner())
    shell.run_line_magic("load_ext", "mercury_nb")
    out = capsys.readouterr().out
    assert "1 task(s) were interrupted" in out and "deadbeef0001" in out
    record = ledger.get("deadbeef0001")
    assert record is not None and (record.status, record.blocker) == ("paused",
                                                                     INTERRUPTED_BLOCKER)


def test_a_damaged_ledger_never_stops_the_extension_loading(
    home: Path, shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    home.mkdir()
    (home / "ledger.sqlite3").write_bytes(b"\x00not a database" * 300)
    shell.run_line_magic("load_ext", "mercury_nb")
    assert "was damaged; it was moved aside as ledger.sqlite3.corrupt-" in capsys.readouterr().out
    assert "mercury" in shell.magics_manager.magics["cell"]
    assert "mercury" in shell.magics_manager.magics["line"]


def test_an_unusable_home_is_reported_at_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              shell: InteractiveShell,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MERCURY_HOME", str(blocker / "home"))
    shell.run_line_magic("load_ext", "mercury_nb")
    assert "could not be opened" in capsys.readouterr().out
    assert "mercury" in shell.magics_manager.magics["cell"]


def test_pause_list_refuse_continue_show(home: Path, shell: InteractiveShell, workspace: Path,
                                         model_name: str, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MERCURY_MAX_AUTO_CONTINUATIONS", "0")
    model = register_scripted_model(model_name, [
        Turn(tool_calls=(call("write_file", path="a.txt", content="a\n"),)),
        Turn(tool_calls=(call("write_file", path="b.txt", content="b\n"),)),
        Turn(text="Wrote a.txt and b.txt."),
    ])
    shell.run_line_magic("load_ext", "mercury_nb")
    flags = f"--model {model_name} --workdir {shlex.quote(str(workspace))}"
    shell.run_cell_magic("mercury", f"{flags} --max-steps 1", "Write a.txt and b.txt.")
    handle = open_ledger(home)
    handle.flush()
    [task] = handle.ledger.list_tasks()
    assert task.status == "paused"
    capsys.readouterr()

    shell.run_line_magic("mercury", "tasks")
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split() == ["id", "status", "age", "task", "banner"]
    assert rows[1].split()[:2] == [task.id, "paused"]

    requests = len(model.requests)
    shell.run_cell_magic("mercury", flags, "Write a.txt and b.txt.")
    assert capsys.readouterr().out.startswith(PAUSED_DUPLICATE)
    assert len(model.requests) == requests

    shell.run_cell_magic("mercury", f"--workdir {shlex.quote(str(workspace))} --max-steps 5",
                         "continue, then say what you wrote")
    out = capsys.readouterr().out
    assert "✓ Task complete" in out and "a.txt" in out and "b.txt" in out
    model.assert_complete()
    sent = model.requests[-2].messages  # the resume turn, then the user's words
    assert sent[-2]["role"] == "user" and "a.txt (created)" in sent[-2]["content"]
    assert 'The task remains: "Write a.txt and b.txt."' in sent[-2]["content"]
    assert sent[-1] == {"role": "user", "content": "then say what you wrote"}

    shell.run_line_magic("mercury", f"show {task.id}")
    detail = capsys.readouterr().out
    assert detail.startswith(f"task {task.id} · completed")
    assert f"continued with {model_name}" in detail and "ended: completed" in detail


def test_line_continue_by_id(home: Path, shell: InteractiveShell, workspace: Path,
                             model_name: str, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MERCURY_MAX_AUTO_CONTINUATIONS", "0")
    model = register_scripted_model(model_name, [
        Turn(tool_calls=(call("write_file", path="a.txt", content="a\n"),)),
        Turn(text="Done with a.txt."),
    ])
    shell.run_line_magic("load_ext", "mercury_nb")
    shell.run_cell_magic(
        "mercury", f"--model {model_name} --workdir {shlex.quote(str(workspace))} --max-steps 1",
        "Write a.txt.")
    handle = open_ledger(home)
    handle.flush()
    [task] = handle.ledger.list_tasks()
    capsys.readouterr()
    shell.run_line_magic("mercury", f"continue {task.id[:8]}")
    assert "✓ Task complete" in capsys.readouterr().out
    model.assert_complete()
    shell.run_line_magic("mercury", "continue")  # nothing paused in the cwd any more
    assert capsys.readouterr().out.startswith("There is no paused task to continue in")


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("bogus", id="unknown-command"),
        pytest.param("show", id="show-without-id"),
        pytest.param("tasks extra", id="tasks-with-argument"),
        pytest.param("continue --no-such-flag", id="bad-flag"),
        pytest.param("show 'unbalanced", id="bad-quoting"),
        pytest.param("stop", id="stop-without-id"),
    ],
)
def test_line_usage_errors(home: Path, shell: InteractiveShell, line: str) -> None:
    shell.run_line_magic("load_ext", "mercury_nb")
    with pytest.raises(UsageError):
        shell.find_line_magic("mercury")(line)


def test_show_unknown_id_is_a_usage_error(home: Path, shell: InteractiveShell) -> None:
    shell.run_line_magic("load_ext", "mercury_nb")
    with pytest.raises(UsageError, match="There is no task 'ffffff'"):
        shell.find_line_magic("mercury")("show ffffff")


def test_stopping_a_task_that_is_not_running_is_a_usage_error(home: Path,
                                                              shell: InteractiveShell) -> None:
    shell.run_line_magic("load_ext", "mercury_nb")
    with pytest.raises(UsageError, match="There is no task 'ffffff'"):
        shell.find_line_magic("mercury")("stop ffffff")


def test_an_empty_ledger_lists_nothing(home: Path, shell: InteractiveShell,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("load_ext", "mercury_nb")
    shell.run_line_magic("mercury", "")
    assert capsys.readouterr().out == "No tasks in the work ledger yet.\n"


def test_nothing_to_wait_can_be_awaited_and_shows_nothing() -> None:
    async def wait() -> str:
        await NothingToWait()
        return "awaited"

    assert asyncio.run(wait()) == "awaited"
    assert repr(NothingToWait()) == ""
