"""Cell selections: what the model may write for run_cells, and how a set of cells reads."""

from __future__ import annotations

import pytest

from mercury_nb.contract.cell_spans import BadSelection, parse_cells, spans


@pytest.mark.parametrize(
    ("spec", "count", "chosen"),
    [
        pytest.param(None, 4, [0, 1, 2, 3], id="none-is-every-cell"),
        pytest.param(None, 0, [], id="none-of-an-empty-notebook"),
        pytest.param([2, 0, 2], 4, [0, 2], id="list-in-notebook-order-once"),
        pytest.param("1-3", 5, [1, 2, 3], id="inclusive-range"),
        pytest.param("0-1, 4", 5, [0, 1, 4], id="ranges-and-indices"),
        pytest.param("2–3", 5, [2, 3], id="en-dash"),
        pytest.param("3", 5, [3], id="one-index"),
        pytest.param("1,,2,", 5, [1, 2], id="empty-items-skipped"),
    ],
)
def test_parse_cells(spec: list[int] | str | None, count: int, chosen: list[int]) -> None:
    assert parse_cells(spec, count) == chosen


@pytest.mark.parametrize(
    ("spec", "count", "message"),
    [
        pytest.param([5], 3, "cell index 5 is out of range: valid indices are 0..2", id="past"),
        pytest.param([-1], 3, "cell index -1 is out of range", id="negative"),
        pytest.param("2-9", 4, "cell index 4 is out of range", id="range-past-the-end"),
        pytest.param("3-1", 4, "the range 3-1 runs backwards", id="backwards"),
        pytest.param("a-b", 4, "'a-b' is not an index or a range like 2-5", id="words"),
        pytest.param([], 4, "the selection names no cell", id="empty"),
        pytest.param([0], 0, "none (the notebook has no cells)", id="empty-notebook"),
    ],
)
def test_parse_cells_refuses(spec: list[int] | str, count: int, message: str) -> None:
    with pytest.raises(BadSelection, match=None) as raised:
        parse_cells(spec, count)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("indices", "text"),
    [
        pytest.param([4, 5], "4–5", id="a-run"),
        pytest.param([7], "7", id="one"),
        pytest.param([0, 1, 2, 5, 7, 8], "0–2, 5, 7–8", id="runs-and-singles"),
        pytest.param([3, 1, 2, 2], "1–3", id="unsorted-with-repeats"),
        pytest.param([], "", id="none"),
    ],
)
def test_spans(indices: list[int], text: str) -> None:
    assert spans(indices) == text
