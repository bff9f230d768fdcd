"""The ledger grows at most 1 MB per task plus the changed files' before/after size (11.2).

A scaled version of ``bench/bench_ledger_size.py`` (38 MB there, 6 MB here: the bound does
not depend on the workspace's size, which is the point)."""

from __future__ import annotations

from pathlib import Path

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import close_all, open_ledger
from mercury_nb.ledger.recorder import TaskRecorder
from mercury_nb.testing import Turn, call

MB = 1_000_000
FILE_BYTES = 100_000


def _ledger_bytes(home: Path) -> int:
    return sum(p.stat().st_size for p in home.glob("ledger.sqlite3*"))


async def test_per_task_growth_is_bounded_whatever_the_workspace_size(
    home: Path, tmp_path: Path, scripted_model
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    line = "the quick brown fox jumps over the lazy dog\n"
    for index in range(60):  # 6 MB of text
        (root / f"f{index:02}.txt").write_text((line * (FILE_BYTES // len(line) + 1))[:FILE_BYTES])
    new_text = "rewritten\n" * 10_000
    tasks = [
        ("What is in f03.txt?", [Turn(tool_calls=(call("read_file", path="f03.txt"),)),
                                 Turn(text="Foxes.")], 0),
        ("What is in f40.txt?", [Turn(tool_calls=(call("list_dir", path="."),)),
                                 Turn(text="Sixty files.")], 0),
        ("Rewrite f07.txt", [Turn(tool_calls=(call("write_file", path="f07.txt",
                                                   content=new_text),)),
                             Turn(text="Rewrote it.")], FILE_BYTES + len(new_text)),
    ]
    previous = _ledger_bytes(home)
    for number, (task, turns, changed_bytes) in enumerate(tasks):
        model = scripted_model(turns)
        config = MercuryConfig(workdir=root, home=home, mode="chat", model=model.name)
        handle = open_ledger(home)
        recorder = TaskRecorder(handle.writer, f"t{number}", task, config)
        outcome = await run_new_session(task, config, model=model, task_id=f"t{number}",
                                        on_event=recorder.wrap(lambda event: None))
        assert outcome.status == "completed", outcome.banner
        handle.flush()
        close_all()  # the WAL is folded into the file
        now = _ledger_bytes(home)
        assert now - previous <= MB + changed_bytes, (task, now - previous)
        previous = now
