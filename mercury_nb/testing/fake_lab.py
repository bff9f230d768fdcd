"""A stand-in for JupyterLab's side of live edits, for tests: it takes edit requests from the
ledger and applies them to the notebook's file (as the labextension applies them to the open
document, then saves it), with the same compare-and-swap, then answers."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mercury_nb.contract.live_edit import source_sha
from mercury_nb.ledger.live_edits import LiveEditStore


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def apply_to_file(path: Path, request: dict[str, Any],
                  unsaved: Iterable[Callable[[Any], None]] = ()) -> tuple[str, dict[str, Any]]:
    """Apply one request to the notebook at ``path`` as the open document would: its answer.
    ``unsaved``: the user's changes not saved yet, made to the document first (applying a
    request saves the document, and with it them; the answer then carries the document as
    it was before the request, ``before``, as the labextension's does)."""
    import nbformat

    notebook = nbformat.read(str(path), as_version=4)
    changes = list(unsaved)
    for change in changes:
        change(notebook)
    before = json.loads(json.dumps(notebook)) if changes else None
    state, reply = _apply(path, notebook, request)
    if state == "applied" and before is not None:
        reply = {**reply, "before": before}  # a dirty document: as it was, as Lab answers
    return state, reply


def _apply(path: Path, notebook: Any, request: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    import nbformat

    cells = notebook.cells
    at = {str(cell.get("id")): i for i, cell in enumerate(cells)}
    op = request["op"]
    if op == "outputs":
        skipped = []
        for ran in request["cells"]:
            i = ran["index"] if "index" in ran else at.get(ran["cell_id"])
            if i is None or source_sha(_source(cells[i])) != ran["read_sha"] or (
                    "expect_count" in ran
                    and cells[i].get("execution_count") != ran["expect_count"]):
                skipped.append(ran["cell_id"])
                continue
            cells[i].outputs = [nbformat.from_dict(o) for o in ran["outputs"]]
            cells[i].execution_count = ran["execution_count"]
        if len(skipped) == len(request["cells"]):
            return "refused", {"skipped": skipped}
        nbformat.write(notebook, str(path))
        return "applied", {"skipped": skipped}
    if op == "insert":
        if request.get("cell_id") in at:  # there again already: never twice
            return "refused", {"source": _source(cells[at[request["cell_id"]]])}
        after = request.get("after_cell_id")
        if after not in at and request.get("after_required"):
            return "refused", {"cell": after}
        index = at[after] + 1 if after in at else request.get("index", len(cells))
        cells.insert(index, nbformat.from_dict(request["cell"]))
        nbformat.write(notebook, str(path))
        return "applied", {}
    i = at.get(request["cell_id"]) if request.get("cell_id") else request.get("index")
    if i is None or not 0 <= i < len(cells):
        return "refused", {"cell": request["cell_id"]}
    if source_sha(_source(cells[i])) != request["read_sha"]:
        return "refused", {"cell": request["cell_id"], "source": _source(cells[i])}
    if op == "delete":
        del cells[i]
    else:
        cells[i].source = request["source"]
        if request.get("mercury"):
            cells[i].setdefault("metadata", {})["mercury"] = request["mercury"]
        if request.get("clear_outputs") and cells[i].get("cell_type") == "code":
            cells[i].outputs, cells[i].execution_count = [], None
        if isinstance(request.get("metadata"), dict):
            cells[i].metadata = nbformat.from_dict(request["metadata"])
    nbformat.write(notebook, str(path))
    return "applied", {}


class FakeLab:
    """Reports ``paths`` open and answers their edit requests from a thread until closed;
    ``requests`` keeps every request it took; :meth:`type_unsaved` plays the user's changes
    to the open document that are not saved yet."""

    def __init__(self, home: Path, paths: list[Path], *, tick_s: float = 0.005) -> None:
        self.store = LiveEditStore(home)
        self.paths = [path.resolve() for path in paths]
        self.requests: list[dict[str, Any]] = []
        self._tick_s = tick_s
        self._stop = threading.Event()
        self._unsaved: dict[Path, list[Callable[[Any], None]]] = {}
        self.store.report_open(self.paths)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.wait(self._tick_s):
            self.store.report_open(self.paths)
            for request_id, path, request in self.store.claim(self.paths):
                self.requests.append(request)
                state, reply = apply_to_file(path, request, self._unsaved.get(path, ()))
                if state == "applied":
                    self._unsaved.pop(path, None)  # the document was saved, with them
                self.store.acknowledge(request_id, state, reply)

    def type_unsaved(self, path: Path, change: Callable[[Any], None]) -> None:
        """The user changes the open notebook at ``path`` (``change`` of its cells) and does
        not save: the file keeps what it had until the document is saved."""
        self._unsaved.setdefault(path.resolve(), []).append(change)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.store.report_closed(self.paths)
        self.store.close()
