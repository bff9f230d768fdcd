"""``%mercury undo ID``: a cell's task is undone from the kernel, and the undo undone."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import close_all, open_ledger
from mercury_nb.testing import Turn, call, register_scripted_model, unregister_scripted_model

MODEL = "scripted/undo-magic"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in MercuryConfig.model_fields:
        monkeypatch.delenv("MERCURY_" + name.upper(), raising=False)
    folder = tmp_path / "home"
    monkeypatch.setenv("MERCURY_HOME", str(folder))
    yield folder
    close_all()
    unregister_scripted_model(MODEL)


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    ip = InteractiveShell.instance()
    ip.config.pop("Mercury", None)
    ip.run_line_magic("load_ext", "mercury_nb")
    yield ip
    ip.run_line_magic("unload_ext", "mercury_nb")
    ip.config.pop("Mercury", None)


def test_undo_a_cells_task_then_the_undo(home: Path, shell: InteractiveShell, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "keep.txt").write_text("before\n")
    register_scripted_model(MODEL, [
        Turn(tool_calls=(call("write_file", path="a.txt", content="a\n"),
                         call("write_file", path="keep.txt", content="after\n"))),
        Turn(text="Wrote a.txt and keep.txt."),
        Turn(text="Wrote a.txt and keep.txt."),
    ])
    shell.run_cell_magic("mercury", f"--model {MODEL} --workdir {shlex.quote(str(workspace))}",
                         "Write a.txt and set keep.txt to after.")
    handle = open_ledger(home)
    handle.flush()
    [task] = handle.ledger.list_tasks()
    capsys.readouterr()

    shell.run_line_magic("mercury", f"undo {task.id}")
    out = capsys.readouterr().out
    assert "  restored: a.txt" in out and "  restored: keep.txt" in out
    assert not (workspace / "a.txt").exists()
    assert (workspace / "keep.txt").read_text() == "before\n"
    undo_id = out.rsplit("to put them back: undo ", 1)[1].strip()

    shell.run_line_magic("mercury", f"undo {undo_id}")
    assert "2 file(s) restored" in capsys.readouterr().out
    assert (workspace / "a.txt").read_text() == "a\n"
    assert (workspace / "keep.txt").read_text() == "after\n"


@pytest.mark.parametrize("line", ["undo", "undo a b", "undo ffffff"])
def test_undo_usage_errors(home: Path, shell: InteractiveShell, line: str) -> None:
    with pytest.raises(UsageError):
        shell.find_line_magic("mercury")(line)
