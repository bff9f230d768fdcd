"""Which cells of an open notebook were the user's unsaved work when a live edit saved it."""

from __future__ import annotations

from typing import Any

import pytest

from mercury_nb.contract.unsaved_cells import user_cells


def cell(cell_id: str, source: Any = "x = 1", **fields: Any) -> dict[str, Any]:
    found = {"id": cell_id, "cell_type": "code", "source": source, "metadata": {},
             "outputs": [], "execution_count": None}
    return {**found, **fields}


def nb(*cells: dict[str, Any]) -> dict[str, Any]:
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


OUT = {"output_type": "stream", "name": "stdout", "text": ["a\n", "b\n"]}


@pytest.mark.parametrize(("disk", "document", "expected"), [
    (nb(cell("a"), cell("b")), nb(cell("a"), cell("b")), set()),
    (nb(cell("a", ["x = ", "1"])), nb(cell("a", "x = 1")), set()),  # lines or one string
    (nb(cell("a", outputs=[OUT])),  # the document joins an output's lines
     nb(cell("a", outputs=[{**OUT, "text": "a\nb\n"}])), set()),
    (nb(cell("a")), nb(cell("a", metadata={"trusted": True})), set()),  # the page's own key
    (nb(cell("a")), nb(cell("a", "x = 2")), {"a"}),  # typed in
    (nb(cell("a")), nb(cell("a", metadata={"tags": ["t"]})), {"a"}),
    (nb(cell("a")), nb(cell("a", outputs=[OUT], execution_count=3)), {"a"}),  # ran it
    (nb(cell("a")), nb(cell("a"), cell("new")), {"new"}),  # added, not saved
    (nb(cell("a"), cell("gone")), nb(cell("a")), {"gone"}),  # deleted, not saved
    (nb(cell("a"), cell("b")), nb(cell("b"), cell("a")), set()),  # moved: cells the same
    (nb(cell("a"), cell("a")), nb(cell("a", "x = 2")), set()),  # an id twice: cannot tell
    (nb({"cell_type": "code", "source": ""}), nb(cell("a")), set()),  # no id
    (None, nb(cell("a")), set()),  # the file was not read
])
def test_user_cells(disk: Any, document: Any, expected: set[str]) -> None:
    assert user_cells(disk, document) == frozenset(expected)


def test_a_markdown_cell_is_compared_without_code_fields() -> None:
    saved = {"id": "m", "cell_type": "markdown", "source": "# Hi", "metadata": {}}
    shown = {**saved, "attachments": {}, "execution_count": None, "outputs": []}
    assert user_cells(nb(saved), nb(shown)) == frozenset()
    assert user_cells(nb(saved), nb({**shown, "source": "# Hello"})) == {"m"}
