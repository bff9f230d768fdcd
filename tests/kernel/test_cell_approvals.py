"""A ``%%mercury`` cell's approval buttons through a real in-process IPython shell, the real
loop and a scripted model: the user's Deny goes to the model, and a task that then cannot
finish pauses naming the denied command and how to allow it."""

from __future__ import annotations

import asyncio
import shlex
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pytest
from IPython.core.interactiveshell import InteractiveShell
from test_magics import ip, names, register

from mercury_nb.runs import registry
from mercury_nb.testing import Turn, call
from mercury_nb.ui import views

__all__ = ["ip", "names"]  # fixtures shared with test_magics

WRITE = "python -c \"open('made.txt', 'w').write('ok')\""


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The cells' views, as widgets (the in-process shell has no kernel: it would be text)."""
    made: list[Any] = []
    real = views.make_view
    monkeypatch.setattr(views, "kind_for_shell", lambda shell: "widget")
    monkeypatch.setattr(views, "make_view", lambda *a, **k: made.append(real(*a, **k)) or made[-1])
    yield made


async def buttons_of(view: Any, task: asyncio.Task[Any],
                     timeout: float = 30.0) -> dict[str, widgets.Button]:
    """The buttons of the approval the cell's view shows, once it shows one (its task
    still running)."""
    deadline = time.monotonic() + timeout
    while True:
        panel = view.box.children[-1] if view.box.children else None
        row = panel.children[-1] if isinstance(panel, widgets.VBox) and panel.children else None
        if isinstance(row, widgets.HBox):
            return {b.description: b for b in row.children if isinstance(b, widgets.Button)}
        assert not task.done(), task.result().banner
        assert time.monotonic() < deadline, "the cell asked nothing"
        await asyncio.sleep(0.01)


async def test_the_cells_deny_pauses_a_task_that_cannot_go_on_naming_the_command(
    ip: InteractiveShell, names: list[str], tmp_path: Path, shown: list[Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocked = Turn(tool_calls=(call("finish", status="blocked",
                                    blocker="I may not run the script."),))
    model = register(names, [Turn(tool_calls=(call("run_command", command=WRITE),)), blocked])
    line = f"--model {model.name} --workdir {shlex.quote(str(tmp_path))}"
    assert ip.run_cell_magic("mercury", line, "Create made.txt by running the script.") is None
    record = registry.latest()
    assert record is not None and len(shown) == 1
    pressed = await buttons_of(shown[0], record.task)
    assert list(pressed) == ["Allow once", f"Always allow `{WRITE}`", "Deny"]
    pressed["Deny"].click()
    outcome = await record.task
    model.assert_complete()
    assert not (tmp_path / "made.txt").exists()
    denied = (f'you denied permission to run "{WRITE}" — allow it with --allow "{WRITE}" '
              "or --permissions auto (the model said: I may not run the script.)")
    assert (outcome.status, outcome.resumable, outcome.blocker) == ("paused", True, denied)
    assert outcome.banner in capsys.readouterr().out  # the cell shows the pause


async def test_an_ask_mode_cell_shows_the_edits_diff_and_allow_once_writes_it(
    ip: InteractiveShell, names: list[str], tmp_path: Path, shown: list[Any],
) -> None:
    (tmp_path / "notes.md").write_text("# Notes\nold line\n")
    model = register(names, [
        Turn(tool_calls=(call("write_file", path="notes.md", content="# Notes\nnew line\n"),)),
        Turn(tool_calls=(call("read_file", path="notes.md"),)),
        Turn(text="notes.md says new line now."),
    ])
    line = f"--model {model.name} --permissions ask --workdir {shlex.quote(str(tmp_path))}"
    assert ip.run_cell_magic("mercury", line, "Change the old line of notes.md.") is None
    record = registry.latest()
    assert record is not None
    pressed = await buttons_of(shown[0], record.task)
    assert list(pressed) == ["Allow once", "Deny"]  # no rule allows a file write alone
    asked = [part.value for part in shown[0].box.children[-1].children[:-1]]
    assert asked[0] == "<b>mercury asks permission to write_file notes.md</b>"
    assert "\n-old line\n+new line</pre>" in asked[1]  # the diff, not the whole file
    assert (tmp_path / "notes.md").read_text() == "# Notes\nold line\n"  # asked first
    pressed["Allow once"].click()
    outcome = await record.task
    model.assert_complete()
    assert (tmp_path / "notes.md").read_text() == "# Notes\nnew line\n"
    assert outcome.status == "completed", outcome.banner


async def test_a_read_only_cell_writes_nothing_and_asks_nothing(
    ip: InteractiveShell, names: list[str], tmp_path: Path, shown: list[Any],
) -> None:
    model = register(names, [
        Turn(tool_calls=(call("write_file", path="a.txt", content="x\n"),)),
        Turn(text="In read-only mode I can only tell you: a.txt would hold x."),
    ])
    line = f"--model {model.name} --permissions read-only --workdir {shlex.quote(str(tmp_path))}"
    assert ip.run_cell_magic("mercury", line, "What would a.txt hold?") is None
    record = registry.latest()
    assert record is not None
    outcome = await record.task
    model.assert_complete()
    assert not (tmp_path / "a.txt").exists()
    offered = {tool["function"]["name"] for tool in model.requests[0].tools}
    assert "write_file" not in offered and "run_command" not in offered
    assert outcome.changes == []
