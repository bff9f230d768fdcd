"""Known-safe summaries of data frames: pandas' DataFrame and Series, polars' when imported.

Called by :mod:`mercury_nb.tools.value_summary` for exact types only. Only the library's own
code runs (its shape, dtypes, ``iloc`` and ``tolist``); every cell is then shown by the
caller's ``cell_text`` (the safe repr), so an object column holding a user's object shows
``<TypeName>``, never its ``__repr__``; a column of another library's extension dtype shows
only its dtype. A column (or Series) whose name is a secret's (``password``, ``api_key``)
shows ``***`` for every value. The first rows are laid out here as a plain text table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mercury_nb.contract.redaction import MASK, is_secret_name

CellText = Callable[[Any, int], str]
DtypeText = Callable[[Any], str]
Parts = tuple[str, str, tuple[str, ...]]
"""``(size, dtype, detail lines)`` of a summary."""

CELL_CHARS = 24
"""Widest cell of a shown table (longer cells end with ``…``)."""


def _secret(label: Any) -> bool:
    """Whether a column or Series of this name holds secrets (its values show ``***``)."""
    return type(label) is str and is_secret_name(label)


def _own_dtype(dtype: Any, dtype_text: DtypeText) -> bool:
    """Whether the values of a column of this dtype may be listed (numpy's or pandas' own)."""
    return not dtype_text(dtype).startswith("<")


def frame_summary(frame: Any, rows: int, max_columns: int, cell_text: CellText,
                  dtype_text: DtypeText) -> Parts:
    """A pandas DataFrame: shape, its first columns with dtypes, its first rows."""
    n_rows, n_cols = frame.shape
    shown = min(n_cols, max_columns)
    raw = frame.columns[:shown].tolist()
    labels = [cell_text(label, CELL_CHARS) for label in raw]
    dtypes = frame.dtypes.iloc[:shown].tolist()
    named = ", ".join(f"{label} {dtype_text(dtype)}" for label, dtype in zip(labels, dtypes,
                                                                             strict=True))
    more = f", … {n_cols - shown} more" if n_cols > shown else ""
    details = [f"columns ({n_cols}): {named}{more}"]
    taken = min(rows, n_rows)
    if taken and shown:
        head = frame.iloc[:taken, :shown]
        index = [cell_text(label, CELL_CHARS) for label in head.index.tolist()]
        columns = []
        for position, dtype in enumerate(dtypes):
            if _secret(raw[position]):
                columns.append([MASK] * taken)
            elif _own_dtype(dtype, dtype_text):
                values = head.iloc[:, position].tolist()
                columns.append([cell_text(value, CELL_CHARS) for value in values])
            else:
                columns.append([f"<{dtype_text(dtype)}>"] * taken)
        details.append(f"first {taken} rows:")
        details.extend(table(index, labels, columns))
    return f"shape ({n_rows}, {n_cols})", "", tuple(details)


def series_summary(series: Any, rows: int, repr_chars: int, cell_text: CellText,
                   dtype_text: DtypeText) -> Parts:
    """A pandas Series: length, dtype, name and first values."""
    dtype = series.dtype
    details = [f"name: {cell_text(series.name, CELL_CHARS)}"]
    taken = min(rows, len(series))
    if taken and _secret(series.name):
        details.append(f"first {taken} values: {', '.join([MASK] * taken)}")
    elif taken and _own_dtype(dtype, dtype_text):
        values = ", ".join(cell_text(value, CELL_CHARS) for value in
                           series.iloc[:taken].tolist())
        details.append(f"first {taken} values: {values[:repr_chars]}")
    return f"len {len(series)}", dtype_text(dtype), tuple(details)


def polars_summary(value: Any, is_frame: bool, rows: int, max_columns: int,
                   cell_text: CellText, dtype_text: DtypeText) -> Parts:
    """A polars DataFrame (shape, schema, first rows) or Series (length, dtype, first
    values); polars' dtypes are named by polars."""

    def polars_dtype(dtype: Any) -> str:
        module = type(dtype).__module__
        return str(dtype) if module.split(".")[0] == "polars" else dtype_text(dtype)

    if not is_frame:
        taken = min(rows, len(value))
        values = ", ".join([MASK] * taken if _secret(value.name) else
                           (cell_text(v, CELL_CHARS) for v in value.head(taken).to_list()))
        return (f"len {len(value)}", polars_dtype(value.dtype),
                (f"name: {cell_text(value.name, CELL_CHARS)}", f"first {taken} values: {values}"))
    n_rows, n_cols = value.shape
    names = list(value.columns)[:max_columns]
    schema = value.schema
    named = ", ".join(f"{cell_text(name, CELL_CHARS)} {polars_dtype(schema[name])}"
                      for name in names)
    more = f", … {n_cols - len(names)} more" if n_cols > len(names) else ""
    details = [f"columns ({n_cols}): {named}{more}"]
    taken = min(rows, n_rows)
    if taken and names:
        records = value.head(taken).select(names).rows()
        columns = [[MASK if _secret(names[i]) else cell_text(record[i], CELL_CHARS)
                    for record in records] for i in range(len(names))]
        details.append(f"first {taken} rows:")
        details.extend(table([str(i) for i in range(taken)],
                             [cell_text(n, CELL_CHARS) for n in names], columns))
    return f"shape ({n_rows}, {n_cols})", "", tuple(details)


def table(index: Sequence[str], labels: Sequence[str],
          columns: Sequence[Sequence[str]]) -> list[str]:
    """Rows of text: a header of ``labels`` over the cells, the ``index`` on the left,
    each column as wide as its widest cell (numbers and text alike right-aligned)."""
    left = max((len(label) for label in index), default=0)
    widths = [max([len(label), *(len(cell) for cell in column)])
              for label, column in zip(labels, columns, strict=True)]
    lines = ["  " + " " * left + "".join(f"  {label:>{w}}" for label, w in
                                         zip(labels, widths, strict=True))]
    for row, label in enumerate(index):
        cells = "".join(f"  {column[row]:>{w}}" for column, w in zip(columns, widths,
                                                                      strict=True))
        lines.append(f"  {label:<{left}}{cells}")
    return lines
