"""The undo planner's table: each file's (before, end, now) decides restore, delete, recreate
or leave; commands, kernel runs and files too large to keep are listed as not undoable."""

from __future__ import annotations

import pytest

from mercury_nb.contract.undo_plan import (
    DeleteCreated,
    FileStates,
    Left,
    LiveRestore,
    Ran,
    RecreateDeleted,
    Restore,
    UndoAsked,
    UndoRefused,
    plan_file,
    plan_undo,
    refuse_undo,
)

TOO = "too large to keep"
CHANGED = "left as is: notes.md changed after the task (yours?)"


@pytest.mark.parametrize(
    ("before", "end", "now", "unkept", "expected"),
    [
        ("a", "b", "b", None, Restore("notes.md", "a", "b")),
        (None, "b", "b", None, DeleteCreated("notes.md", "b")),
        ("a", None, None, None, RecreateDeleted("notes.md", "a")),
        ("a", "b", "c", None, Left("notes.md", CHANGED)),
        (None, "b", "c", None, Left("notes.md", CHANGED)),
        (None, "b", None, None, None),  # the user deleted the created file: already as before
        ("a", None, "c", None, Left("notes.md", CHANGED)),  # recreated by someone since
        ("a", "b", None, None, Left("notes.md", CHANGED)),  # deleted by someone since
        ("a", "b", "a", None, None),  # already back
        ("a", "b", "b", TOO, Left("notes.md", "left as is: notes.md: too large to keep")),
        ("a", None, None, TOO,
         Left("notes.md", "left as is: notes.md: too large to keep")),
        ("a", "b", "c", TOO, Left("notes.md", CHANGED)),  # changed after wins: it is named
    ],
)
def test_plan_file(before: str | None, end: str | None, now: str | None, unkept: str | None,
                   expected: object) -> None:
    assert plan_file(FileStates("notes.md", before, end, now, unkept)) == expected


def test_plan_lists_what_cannot_be_undone() -> None:
    files = (FileStates("big.bin", "a", "b", "b", unkept=TOO),
             FileStates("a.py", None, "x", "x", unkept=None))
    ran = Ran(commands=("pip install rich", "git commit -m x", "pip install rich"),
              kernel_runs=2)
    plan = plan_undo(files, ran)
    assert plan.actions == (DeleteCreated("a.py", "x"),
                            Left("big.bin", "left as is: big.bin: too large to keep"))
    assert plan.not_undoable == ("big.bin: too large to keep",
                                 "the command it ran: pip install rich",
                                 "the command it ran: git commit -m x",
                                 "state changed in the kernel (2 runs of code there)")


def test_nothing_ran_nothing_listed() -> None:
    plan = plan_undo((FileStates("a", "x", "y", "y", unkept=None),), Ran())
    assert plan.actions == (Restore("a", "x", "y"),)
    assert plan.not_undoable == ()


@pytest.mark.parametrize(
    ("before", "end", "now", "unkept", "expected"),
    [
        ("a", "b", "b", None, LiveRestore("nb.ipynb", "a", "b")),
        ("a", "b", "c", None, LiveRestore("nb.ipynb", "a", "b")),  # each cell compared in Lab
        ("a", "b", "a", None, None),  # already back
        (None, "b", "b", None, DeleteCreated("nb.ipynb", "b")),  # created: the file goes
        ("a", None, None, None, RecreateDeleted("nb.ipynb", "a")),
        ("a", "b", None, None, Left("nb.ipynb", "left as is: nb.ipynb changed after the "
                                                "task (yours?)")),
        ("a", "b", "b", TOO, Left("nb.ipynb", "left as is: nb.ipynb: too large to keep")),
    ],
)
def test_plan_file_of_an_open_notebook(before: str | None, end: str | None, now: str | None,
                                       unkept: str | None, expected: object) -> None:
    assert plan_file(FileStates("nb.ipynb", before, end, now, unkept, live=True)) == expected


def test_open_notebooks_are_planned_apart() -> None:
    plan = plan_undo((FileStates("nb.ipynb", "a", "b", "c", live=True),
                      FileStates("a.py", "a", "b", "b")), Ran())
    assert plan.live == (LiveRestore("nb.ipynb", "a", "b"),)
    assert plan.actions == (Restore("a.py", "a", "b"),)


def asked(running: bool = False, busy: str | None = None, kept: bool = True,
          changed: bool = True) -> UndoAsked:
    return UndoAsked("t1", running, busy, "/ws", kept, changed, "/home")


@pytest.mark.parametrize(
    ("observed", "expected"),
    [
        (asked(), None),
        (asked(kept=False, changed=False), None),  # nothing changed, nothing kept: no-op
        (asked(running=True, busy="t1"), UndoRefused(
            "cannot-continue", "task t1 is still running: stop it before undoing it")),
        (asked(busy="t2"), UndoRefused(
            "workspace-busy", "task t2 is running in /ws: undo t1 after it ends")),
        (asked(kept=False), UndoRefused(
            "cannot-continue", "task t1 kept no record for undo (it ran before undo was "
            "recorded, or its record under /home is gone)")),
    ],
)
def test_refuse_undo(observed: UndoAsked, expected: UndoRefused | None) -> None:
    assert refuse_undo(observed) == expected
