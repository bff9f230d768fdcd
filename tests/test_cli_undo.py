"""``python -m mercury_nb undo ID``: a task's file changes are taken back in a new process, a
file the user edited afterwards is left and named, the command is listed as not undoable,
and the undo's own id undoes the undo (issue 21.2)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mercury_nb.testing import Turn, call
from tests.test_cli import run_cli

LEFT_NOTES = "left as is: notes.md changed after the task (yours?)"
BEFORE = {"keep.py": "a = 1\n", "notes.md": "notes\n", "old.txt": "old\n"}


def _task_turns() -> list[Turn]:
    return [
        Turn(tool_calls=(call("create_file", path="new.py", content="print('new')\n"),
                         call("edit_file", path="keep.py", old_text="a = 1", new_text="a = 2"),
                         call("edit_file", path="notes.md", old_text="notes",
                              new_text="task notes"),
                         call("delete_file", path="old.txt"))),
        Turn(tool_calls=(call("run_command", command="echo done"),)),
        Turn(text="Created new.py, set a = 2, rewrote the notes and removed old.txt."),
        Turn(text="Created new.py, set a = 2, rewrote the notes and removed old.txt."),
    ]


def _files(workspace: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(workspace.iterdir()) if p.is_file()}


@pytest.mark.parametrize("git", [False, True], ids=["content", "git"])
def test_undo_from_the_cli_then_undo_the_undo(tmp_path: Path, loopback_server,
                                              git: bool) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for name, text in BEFORE.items():
        (workspace / name).write_text(text)
    if git:
        for args in (["init", "-q"], ["add", "."],
                     ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"]):
            subprocess.run(["git", *args], cwd=workspace, check=True)
    server = loopback_server(_task_turns())
    result = run_cli("run", "create new.py, set a = 2, rewrite the notes, remove old.txt",
                     "--permissions", "auto",
                     "--json", "--model", "openai/m", "--api-base", server.url,
                     "--workdir", str(workspace), cwd=tmp_path)
    assert result.returncode in (0, 1, 3), result.stderr
    task_id = json.loads(result.stdout)["task_id"]
    end = _files(workspace)
    assert end["keep.py"] == "a = 2\n" and "new.py" in end and "old.txt" not in end
    (workspace / "notes.md").write_text("my own notes\n")  # the user, after the task

    undone = run_cli("undo", task_id, "--json", cwd=tmp_path)
    assert undone.returncode == 3, undone.stderr
    report = json.loads(undone.stdout)
    assert sorted(report["restored"]) == ["keep.py", "new.py", "old.txt"]
    assert report["left"] == [{"path": "notes.md", "why": LEFT_NOTES}]
    assert report["not_undoable"] == ["the command it ran: echo done"]
    assert _files(workspace) == {**BEFORE, "notes.md": "my own notes\n"}

    again = run_cli("undo", report["undo_id"], "--json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    redone = json.loads(again.stdout)
    assert sorted(redone["restored"]) == ["keep.py", "new.py", "old.txt"]
    assert redone["left"] == [] and redone["not_undoable"] == []
    assert _files(workspace) == {**end, "notes.md": "my own notes\n"}

    shown = run_cli("show", report["undo_id"], "--json", cwd=tmp_path)
    assert json.loads(shown.stdout)["task"] == f"undo {task_id}"


def test_undo_names_its_refusals(tmp_path: Path) -> None:
    result = run_cli("undo", "nosuchtask", cwd=tmp_path)
    assert result.returncode == 2
    assert "nosuchtask" in result.stderr


def test_undo_prints_lines_for_people(tmp_path: Path, loopback_server) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for name, text in BEFORE.items():
        (workspace / name).write_text(text)
    server = loopback_server(_task_turns())
    result = run_cli("run", "change things", "--json", "--permissions", "auto",
                     "--model", "openai/m", "--api-base", server.url, "--workdir", str(workspace),
                     cwd=tmp_path)
    task_id = json.loads(result.stdout)["task_id"]
    undone = run_cli("undo", task_id, cwd=tmp_path)
    assert undone.returncode == 0, undone.stderr
    assert "  restored: notes.md" in undone.stdout
    assert "not undoable:\n  the command it ran: echo done" in undone.stdout
    assert _files(workspace) == BEFORE
