"""Benchmark: how much the work ledger grows per task in a large text workspace (target: at
most 1 MB plus the before/after size of the files the task changed).

Run with ``python bench/bench_ledger_size.py [--mb 38] [--questions 5]``. Not part of the
test suite. A workspace of ``--mb`` megabytes of text (files of 100,000 bytes) is made in a
temporary folder; then ``--questions`` chat questions that each list the folder and read one
file, and one task that rewrites one file, run through the whole agent loop with an
in-process scripted model and the ledger recorder, into a fresh ``MERCURY_HOME``. After
every task the ledger is closed (its WAL folded in) and the size of every
``ledger.sqlite3*`` file is printed, with the growth and the bound for that task.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
from pathlib import Path

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import close_all, open_ledger
from mercury_nb.ledger.recorder import TaskRecorder
from mercury_nb.testing import ScriptedModel, Turn, call

FILE_BYTES = 100_000
MB = 1_000_000


def make_workspace(root: Path, total_mb: float) -> list[str]:
    names = []
    line = "the quick brown fox jumps over the lazy dog, and the ledger stays small\n"
    body = (line * (FILE_BYTES // len(line) + 1))[:FILE_BYTES]
    for index in range(int(total_mb * MB // FILE_BYTES)):
        folder = root / f"dir{index // 100:02}"
        folder.mkdir(exist_ok=True)
        (folder / f"file{index:04}.txt").write_text(f"file {index}\n" + body)
        names.append(f"dir{index // 100:02}/file{index:04}.txt")
    return names


def ledger_bytes(home: Path) -> int:
    return sum(p.stat().st_size for p in home.glob("ledger.sqlite3*"))


async def one_task(home: Path, root: Path, number: int, task: str, turns: list[Turn],
                   mode: str) -> None:
    model = ScriptedModel(turns, name="scripted/bench")
    config = MercuryConfig(workdir=root, home=home, mode=mode, model=model.name)  # type: ignore[arg-type]
    handle = open_ledger(home)
    recorder = TaskRecorder(handle.writer, f"t{number}", task, config)
    outcome = await run_new_session(task, config, model=model, task_id=f"t{number}",
                                    on_event=recorder.wrap(lambda event: None))
    handle.flush()
    close_all()
    assert outcome.status == "completed", outcome.banner


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=38.0)
    parser.add_argument("--questions", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "ws", Path(tmp) / "home"
        root.mkdir()
        names = make_workspace(root, args.mb)
        size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
        print(f"python {platform.python_version()}, workspace {len(names)} files, "
              f"{size / MB:.1f} MB")
        os.environ["MERCURY_HOME"] = str(home)
        tasks: list[tuple[str, list[Turn], str, int]] = []
        for q in range(args.questions):
            name = names[(q * 37) % len(names)]
            turns = [Turn(tool_calls=(call("list_dir", path="dir00"),)),
                     Turn(tool_calls=(call("read_file", path=name),)),
                     Turn(text=f"{name} is about a fox.")]
            tasks.append((f"What is in {name}?", turns, "chat", 0))
        changed = names[1]
        before = (root / changed).stat().st_size
        new_text = "rewritten\n" * 12_000  # 120,000 bytes
        turns = [Turn(tool_calls=(call("write_file", path=changed, content=new_text),)),
                 Turn(text="Rewrote it.")]
        tasks.append((f"Rewrite {changed}", turns, "chat", before + len(new_text)))
        start = ledger_bytes(home)
        print(f"ledger before: {start / MB:.3f} MB")
        previous = start
        for number, (task, turns, mode, changed_bytes) in enumerate(tasks, 1):
            await one_task(home, root, number, task, turns, mode)
            now = ledger_bytes(home)
            bound = MB + changed_bytes
            verdict = "within" if now - previous <= bound else "OVER"
            print(f"task {number} ({task[:40]}): ledger {now / MB:.3f} MB, "
                  f"+{(now - previous) / MB:.3f} MB ({verdict} the bound "
                  f"{bound / MB:.3f} MB)")
            previous = now
        print(f"ledger after {len(tasks)} tasks: {previous / MB:.3f} MB "
              f"(grew {(previous - start) / MB:.3f} MB)")


if __name__ == "__main__":
    asyncio.run(main())
