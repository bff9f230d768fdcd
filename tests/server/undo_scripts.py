"""A scripted task that creates, edits and deletes files and runs a command, for the undo
tests of the panel's API (tests/server/test_undo_handler.py) and of the panel in Chromium
(tests/browser/test_undo_panel.py)."""

from __future__ import annotations

from pathlib import Path

from mercury_nb.testing import Turn, call, register_scripted_model

BEFORE = {"keep.py": "a = 1\n", "notes.md": "notes\n", "old.txt": "old\n"}
"""The workspace before the task."""
NAMES = ("panel", "revert")
"""One scripted model ``scripted/undo-<name>`` per test of the panel."""
COMMAND = "echo done"
LEFT_NOTES = "left as is: notes.md changed after the task (yours?)"


def make_workspace(folder: Path) -> None:
    folder.mkdir()
    for name, text in BEFORE.items():
        (folder / name).write_text(text)


def files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir()) if p.is_file()}


def changing_turns() -> list[Turn]:
    """Create new.py, edit keep.py and notes.md, delete old.txt, run a command; say so."""
    said = Turn(text="Created new.py, set a = 2, rewrote the notes and removed old.txt.")
    return [
        Turn(tool_calls=(call("create_file", path="new.py", content="print('new')\n"),
                         call("edit_file", path="keep.py", old_text="a = 1", new_text="a = 2"),
                         call("edit_file", path="notes.md", old_text="notes",
                              new_text="task notes"),
                         call("delete_file", path="old.txt"))),
        Turn(tool_calls=(call("run_command", command=COMMAND),)),
        said,
        said,
    ]


def register_all(prefix: str = "undo") -> None:
    for name in NAMES:
        register_scripted_model(f"{prefix}-{name}", changing_turns())
