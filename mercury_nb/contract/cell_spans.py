"""Cell selections as the model writes them ("2-5", [0, 3]) and as people read them ("2–5, 7")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class BadSelection(ValueError):
    """A selection that names no cell of the notebook, or is not readable; the message says why."""


def parse_cells(spec: Sequence[int] | str | None, count: int) -> list[int]:
    """The 0-based cell indices ``spec`` chooses of a notebook of ``count`` cells, in notebook
    order without repeats: None is every cell; a list names indices; a string holds indices
    and inclusive ranges separated by commas (``"0-3,7"``). An index out of range, a reversed
    range or an empty choice raises :class:`BadSelection`."""
    if spec is None:
        return list(range(count))
    chosen: set[int] = set()
    items: Iterable[int | str] = spec.split(",") if isinstance(spec, str) else spec
    for item in items:
        if isinstance(item, int):
            chosen.add(_index(item, count))
            continue
        text = item.strip().replace("–", "-").replace(":", "-")
        if not text:
            continue
        first, sep, last = text.partition("-")
        try:
            low = int(first)
            high = int(last) if sep else low
        except ValueError:
            raise BadSelection(
                f"cells: {item.strip()!r} is not an index or a range like 2-5") from None
        if high < low:
            raise BadSelection(f"cells: the range {low}-{high} runs backwards")
        chosen.update(_index(i, count) for i in range(low, high + 1))
    if not chosen:
        raise BadSelection("cells: the selection names no cell")
    return sorted(chosen)


def _index(index: int, count: int) -> int:
    if not 0 <= index < count:
        valid = f"0..{count - 1}" if count else "none (the notebook has no cells)"
        raise BadSelection(f"cell index {index} is out of range: valid indices are {valid}")
    return index


def spans(indices: Iterable[int]) -> str:
    """``2–5, 7``: sorted indices with consecutive runs joined by an en dash."""
    ordered = sorted(set(indices))
    parts: list[str] = []
    start = previous = None
    for index in ordered:
        if previous is not None and index == previous + 1:
            previous = index
            continue
        if start is not None:
            parts.append(_span(start, previous))
        start = previous = index
    if start is not None:
        parts.append(_span(start, previous))
    return ", ".join(parts)


def _span(start: int, end: int | None) -> str:
    return str(start) if end is None or end == start else f"{start}–{end}"
