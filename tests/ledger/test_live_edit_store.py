"""The ledger's live-edit tables: open notebooks, requests claimed once, answers, withdrawal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mercury_nb.ledger.live_edits import LiveEditStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LiveEditStore]:
    now = [1000.0]
    made = LiveEditStore(tmp_path / "home", clock=lambda: now[0])
    yield made
    made.close()


def test_open_records_and_closing(store: LiveEditStore, tmp_path: Path) -> None:
    nb = tmp_path / "a.ipynb"
    assert store.seen_at(nb) is None
    store.report_open([nb])
    assert store.seen_at(nb) == 1000.0
    store.report_closed([nb])
    assert store.seen_at(nb) is None


def test_requests_are_claimed_once_for_open_paths_only(store: LiveEditStore,
                                                       tmp_path: Path) -> None:
    a, b = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    first = store.submit(a, {"op": "edit", "cell_id": "c1"})
    second = store.submit(b, {"op": "insert", "cell_id": "c2"})
    assert store.claim([b]) == [(second, b, {"op": "insert", "cell_id": "c2"})]
    assert store.claim([b]) == []                      # delivered once
    assert store.claim([a, b]) == [(first, a, {"op": "edit", "cell_id": "c1"})]
    assert store.answer(first) is None                 # delivered, not answered
    assert store.acknowledge(first, "refused", {"source": "now"})
    assert store.answer(first) == ("refused", {"source": "now"})
    assert not store.acknowledge(first, "applied", {})  # answered already


def test_withdrawal(store: LiveEditStore, tmp_path: Path) -> None:
    a = tmp_path / "a.ipynb"
    pending = store.submit(a, {})
    assert store.withdraw(pending, delivered_too=False)
    assert store.claim([a]) == []                      # never delivered after withdrawal
    taken = store.submit(a, {})
    store.claim([a])
    assert not store.withdraw(taken, delivered_too=False)  # JupyterLab has it: wait more
    assert store.withdraw(taken, delivered_too=True)
    assert not store.acknowledge(taken, "applied", {})  # a late answer is refused
    assert store.answer(taken) == ("withdrawn", {})


def test_unknown_answer_is_refused(store: LiveEditStore, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="applied, refused, not-open"):
        store.acknowledge(store.submit(tmp_path / "a.ipynb", {}), "done", {})
