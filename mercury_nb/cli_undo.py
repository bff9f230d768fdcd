"""``python -m mercury_nb undo ID [--json]``: take back what a finished task changed on disk.

Prints what was restored, what was left as is (and why: a file changed after the task is
never overwritten) and what no undo takes back (the commands the task ran, state changed in
the kernel, files too large to keep). Exits 0 when everything was restored, 3 when something
was left, 2 when nothing could be undone (an unknown or running task).
"""

from __future__ import annotations

import argparse
import json
import sys

from mercury_nb.contract.config import MercuryConfig

EXIT_RESTORED = 0
EXIT_USAGE = 2
EXIT_LEFT = 3


def add_undo_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    undo = sub.add_parser("undo", help="undo a finished task's changes to files (an undo's "
                                       "id undoes the undo)")
    undo.add_argument("id", help="task id (or a unique prefix of it)")
    undo.add_argument("--json", action="store_true",
                      help='print {"restored", "left", "not_undoable"} as JSON')


def undo_command(config: MercuryConfig, task_id: str, *, as_json: bool) -> int:
    from mercury_nb import runs

    report = runs.undo(task_id, config)
    if isinstance(report, runs.Refusal):
        print(report.message, file=sys.stderr)
        return EXIT_USAGE
    if as_json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print(report.text())
    return EXIT_RESTORED if report.complete else EXIT_LEFT
