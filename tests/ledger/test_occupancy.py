"""Taking a workspace is one transaction: of starts racing on separate connections (as
separate processes would), exactly one gets it, whatever the interleaving."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from mercury_nb.ledger.occupancy import Busy, NotClaimed, Occupied
from mercury_nb.ledger.owner import Owner, current_owner
from mercury_nb.ledger.records import TaskHeader
from mercury_nb.ledger.store import Ledger


def header(task_id: str, workspace: str = "/ws", parent: str | None = None) -> TaskHeader:
    return TaskHeader(id=task_id, task=f"task {task_id}", workspace=workspace,
                      models=("openai/a",), parent=parent)


@pytest.mark.parametrize("attempt", range(10))
def test_of_racing_starts_on_separate_connections_exactly_one_occupies(
    tmp_path: Path, attempt: int
) -> None:
    path = tmp_path / "ledger.sqlite3"
    Ledger(path).close()
    racers = 4
    barrier = threading.Barrier(racers)
    results: dict[str, object] = {}

    def start(task_id: str) -> None:
        ledger = Ledger(path)
        try:
            barrier.wait()
            results[task_id] = ledger.occupy(header(task_id), "execute")
        finally:
            ledger.close()

    threads = [threading.Thread(target=start, args=(f"t{n}",)) for n in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == racers
    winners = [task_id for task_id, taken in results.items() if taken == Occupied()]
    assert len(winners) == 1, results
    for task_id, taken in results.items():
        if task_id != winners[0]:
            assert isinstance(taken, Busy) and taken.decision.running.task_id == winners[0]
    ledger = Ledger(path)
    try:
        assert [r.id for r in ledger.find(workspace="/ws", status="running")] == winners
    finally:
        ledger.close()


def test_chat_and_other_workspaces_and_dead_owners_and_sub_agents_never_block(
    tmp_path: Path
) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    try:
        assert ledger.occupy(header("a"), "execute") == Occupied()
        assert ledger.occupy(header("q"), "chat") == Occupied()
        assert ledger.occupy(header("b", workspace="/other"), "execute") == Occupied()
        assert isinstance(ledger.occupy(header("c"), "execute"), Busy)
        dead = Owner(pid=2**22 + 11, token="gone")
        assert ledger.occupy(header("d", workspace="/w3"), "execute", owner=dead) == Occupied()
        ledger.occupy(header("d.1", workspace="/w3", parent="d"), "execute",
                      owner=current_owner())
        assert ledger.occupy(header("e", workspace="/w3"), "execute") == Occupied()
    finally:
        ledger.close()


def test_a_continue_claims_only_from_the_given_statuses_and_release_needs_no_events(
    tmp_path: Path
) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    try:
        assert ledger.occupy(header("a"), "execute") == Occupied()
        assert ledger.occupy(header("a"), "execute", claim_from=("paused",)) == NotClaimed()
        assert ledger.release("a")
        assert ledger.get("a") is None
        ledger.start_task(header("s"))  # a started task has events: release leaves it
        assert not ledger.release("s")
        assert ledger.get("s") is not None
    finally:
        ledger.close()
