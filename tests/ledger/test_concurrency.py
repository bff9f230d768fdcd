"""Several processes write to one ledger at the same moment without losing or damaging rows."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

WRITER = """
import sys
from pathlib import Path
from mercury_nb.ledger.records import TaskHeader
from mercury_nb.ledger.store import Ledger

path, name, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
ledger = Ledger(path)
print("ready", flush=True)
sys.stdin.readline()  # the barrier: every writer starts at once
for number in range(count):
    header = TaskHeader(id=f"{name}-{number}", task=f"task {number}", workspace="/ws",
                        models=("m",))
    ledger.start_task(header)
    ledger.save_turn(header, verdict="steps-exhausted", decision="NextTurn",
                     checkpoint='{"n": %d}' % number, snapshot="{}", steps=number)
    ledger.add_event(header, "notice", name * 200)
    ledger.finish_task(header, status="completed", verdict="text-stop", banner="done",
                       blocker=None, changes="[]", evidence="[]", steps=number)
ledger.close()
print("done", flush=True)
"""

WRITERS = ("alpha", "beta", "gamma")
TASKS_EACH = 150


def test_processes_writing_at_once_keep_the_ledger_whole(home: Path) -> None:
    home.mkdir(parents=True)
    path = home / "ledger.sqlite3"
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, str(TASKS_EACH)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
        for name in WRITERS
    ]
    try:
        for process in processes:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == "ready"
        for process in processes:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        results = [process.communicate(timeout=120) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    for process, (out, err) in zip(processes, results, strict=True):
        assert process.returncode == 0, err
        assert out.strip() == "done"

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        total = len(WRITERS) * TASKS_EACH
        assert conn.execute("SELECT count(*) FROM tasks WHERE status = 'completed'").fetchone()[
            0] == total
        assert conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0] == total
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 4 * total
        per_writer = dict(conn.execute(
            "SELECT substr(task_id, 1, instr(task_id, '-') - 1), count(*) FROM events "
            "GROUP BY 1"
        ).fetchall())
    finally:
        conn.close()
    assert per_writer == dict.fromkeys(WRITERS, 4 * TASKS_EACH)
