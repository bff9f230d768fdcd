"""Pruning the ledger prunes undo's kept copies too: a task the ledger forgot leaves no index
(and, once old, no blob) in ``$MERCURY_HOME/.mercury-undo``."""

from __future__ import annotations

from pathlib import Path

from mercury_nb.ledger.access import startup
from mercury_nb.ledger.owner import Owner
from mercury_nb.ledger.records import TaskHeader
from mercury_nb.ledger.store import Ledger
from mercury_nb.workspace.undo_store import KeptFile, TaskStates, load_states, save_states


def test_startup_pruning_drops_the_undo_index_of_each_pruned_task(
        home: Path, ledger: Ledger, clock) -> None:
    for task_id in ("older", "newer"):
        clock.now += 60
        head = TaskHeader(id=task_id, task="do it", workspace="/ws", models=("openai/a",))
        ledger.start_task(head, owner=Owner(pid=1, token="x"))
        ledger.finish_task(head, status="completed", verdict=None, banner=None, blocker=None,
                           changes="[]", evidence="[]", steps=1)
        save_states(home, task_id, TaskStates("/ws", {"a.txt": KeptFile(None, "e")}))

    startup(home, keep_finished=1, keep_days=1e9)

    assert load_states(home, "older") is None
    assert load_states(home, "newer") is not None
