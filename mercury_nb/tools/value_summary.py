"""Known-safe summaries of one Python value: no code of the value's own type ever runs.

Only exact builtin types (and a few of the standard library's), numpy's arrays and scalars,
pandas' DataFrame and Series and polars' (when the user's kernel imported them: this module
never imports numpy, pandas or polars) are described beyond their type. Types are told by
identity (``type(value) is dict``), never by ``isinstance`` (a class can fake ``__class__``)
nor by calling ``len``, ``repr`` or ``str`` of an unknown type (a ``__repr__`` can hang or
have side effects); a type's own name is read through ``type``'s descriptors, so not even a
metaclass runs. A numpy array subclass is measured through ``ndarray``'s own descriptors.
"""

from __future__ import annotations

import datetime
import decimal
import pathlib
import sys
import types
import uuid
from dataclasses import dataclass
from typing import Any

from mercury_nb.contract.redaction import MASK, is_secret_name
from mercury_nb.contract.text_cut import CUT_REACH, clip
from mercury_nb.tools.frame_summary import frame_summary, polars_summary, series_summary

_QUALNAME = type.__dict__["__qualname__"]
_MODULE = type.__dict__["__module__"]
_FUNCTION_QUALNAME = types.FunctionType.__dict__["__qualname__"]
_BUILTIN_QUALNAME = types.BuiltinFunctionType.__dict__["__qualname__"]

ITEMS_SHOWN = 20
"""Items of a list, tuple, set or dict shown in its repr before ``…``."""

LARGE_INT_BITS = 3000
"""An int longer than this is shown by its size (its decimal repr would be slow or refused)."""

_PLAIN = (type(None), bool, float, complex, range, datetime.date, datetime.datetime,
          datetime.time, datetime.timedelta, decimal.Decimal, uuid.UUID,
          pathlib.PurePosixPath, pathlib.PosixPath, pathlib.PureWindowsPath)
"""Exact types whose repr is the standard library's own, bounded and without side effects."""

_SAFE_ARRAY_KINDS = frozenset("biufcmMSU")
"""numpy dtype kinds whose elements numpy prints itself (object and void may hold anything)."""


@dataclass(frozen=True)
class SummaryLimits:
    """How much one summary shows (from the config's kernel fields)."""

    repr_chars: int = 200
    head_rows: int = 5
    max_columns: int = 30
    secrets: tuple[str, ...] = ()
    """Values masked before any cut (a key across a cut is masked whole)."""


@dataclass(frozen=True)
class ValueSummary:
    """What is safely known of one value: its type, its length or shape, its dtype, a
    bounded repr (empty: not shown) and more lines (a frame's columns and first rows)."""

    type_name: str
    size: str = ""
    dtype: str = ""
    repr: str = ""
    details: tuple[str, ...] = ()


def type_name(cls: type) -> str:
    """``int``, ``numpy.ndarray``, ``pandas.DataFrame``, ``__main__.Slow``: read through
    ``type``'s own descriptors (no metaclass property runs)."""
    qualname = str(_QUALNAME.__get__(cls, type))
    module = _MODULE.__get__(cls, type)
    if not isinstance(module, str) or module == "builtins":
        return qualname
    return f"{module}.{qualname}"


def _one_of(cls: type, known: tuple[Any, ...]) -> bool:
    """Whether ``cls`` is one of ``known``, by identity: ``cls in known`` would call the
    ``__eq__`` of ``cls``'s metaclass, which is user code."""
    return any(cls is one for one in known)


def is_module(value: Any) -> bool:
    """Whether ``value`` is a module (told by its real type)."""
    return issubclass(type(value), types.ModuleType)


def cut(text: str, limit: int, secrets: tuple[str, ...] = ()) -> str:
    """``text`` at most ``limit`` characters, ``…`` marking a cut, redacted before it is
    cut (:func:`~mercury_nb.contract.text_cut.clip`): a key across the cut is masked whole."""
    return clip(text, limit, secrets)


def _numpy() -> Any:
    return sys.modules.get("numpy")


def _pandas() -> Any:
    return sys.modules.get("pandas")


def _pandas_scalars(pd: Any) -> tuple[type, ...]:
    try:
        return (pd.Timestamp, pd.Timedelta, pd.Period, type(pd.NaT), type(pd.NA))
    except AttributeError:
        return ()


def safe_repr(value: Any, limit: int, depth: int = 2,
              secrets: tuple[str, ...] = ()) -> str | None:
    """A repr of ``value`` built only from known-safe types, at most ``limit`` characters
    (None: its type is not one of them, and nothing of it may be shown)."""
    cls = type(value)
    if _one_of(cls, (str, bytes, bytearray)):
        return cut(repr(value[: limit + CUT_REACH]), limit, secrets)
    if cls is int:
        if value.bit_length() > LARGE_INT_BITS:
            return f"<int of {value.bit_length()} bits>"
        return cut(repr(value), limit, secrets)
    if _one_of(cls, _PLAIN):
        return cut(repr(value), limit, secrets)
    if _one_of(cls, (list, tuple, set, frozenset, dict)):
        return _container_repr(value, limit, depth, secrets)
    np = _numpy()
    if (np is not None and issubclass(cls, np.generic)
            and _MODULE.__get__(cls, type) == "numpy"):
        kind = np.dtype(cls).kind
        return cut(repr(value), limit, secrets) if kind in _SAFE_ARRAY_KINDS else None
    pd = _pandas()
    if pd is not None and _one_of(cls, _pandas_scalars(pd)):
        return cut(repr(value), limit, secrets)
    if cls is types.FunctionType:
        return f"<function {_FUNCTION_QUALNAME.__get__(value)}>"
    if cls is types.BuiltinFunctionType:
        return f"<built-in function {_BUILTIN_QUALNAME.__get__(value)}>"
    if issubclass(cls, type):
        return f"<class {type_name(value)}>"
    return None


def _container_repr(value: Any, limit: int, depth: int, secrets: tuple[str, ...]) -> str:
    cls = type(value)
    if depth <= 0:
        return f"<{cls.__name__} of {len(value)}>"
    parts: list[str] = []
    used = 0
    items = iter(value.items()) if cls is dict else iter(value)
    for index, item in enumerate(items):
        if index >= ITEMS_SHOWN or used > limit:
            parts.append("…")
            break
        if cls is dict:
            key, val = item
            key_text = safe_repr(key, limit, depth - 1, secrets) or f"<{type_name(type(key))}>"
            secret = type(key) is str and is_secret_name(key)
            val_text = MASK if secret else (
                safe_repr(val, limit, depth - 1, secrets) or f"<{type_name(type(val))}>")
            text = f"{key_text}: {val_text}"
        else:
            text = safe_repr(item, limit, depth - 1, secrets) or f"<{type_name(type(item))}>"
        parts.append(text)
        used += len(text) + 2
    inner = ", ".join(parts)
    if cls is list:
        shown = f"[{inner}]"
    elif cls is tuple:
        shown = f"({inner},)" if len(value) == 1 else f"({inner})"
    elif cls is dict:
        shown = "{" + inner + "}"
    elif not value:
        shown = f"{cls.__name__}()"
    else:
        shown = "{" + inner + "}" if cls is set else f"frozenset({{{inner}}})"
    return cut(shown, limit, secrets)


def cell_text(value: Any, limit: int, secrets: tuple[str, ...] = ()) -> str:
    """One table cell: a string as itself (on one line), anything else by :func:`safe_repr`,
    an unknown type as ``<TypeName>``."""
    if type(value) is str:
        return cut(value[: limit + CUT_REACH].replace("\n", "\\n"), limit, secrets)
    pd = _pandas()
    if pd is not None and _one_of(type(value), _pandas_scalars(pd)):
        return cut(str(value), limit, secrets)
    return safe_repr(value, limit, 1, secrets) or f"<{type_name(type(value))}>"


def summarize_value(value: Any, limits: SummaryLimits) -> ValueSummary:
    """The known-safe summary of ``value`` (see the module)."""
    cls = type(value)
    name = type_name(cls)
    secrets = limits.secrets

    def cells(cell: Any, limit: int) -> str:
        return cell_text(cell, limit, secrets)

    if _one_of(cls, (str, bytes, bytearray, list, tuple, set, frozenset, dict)):
        return ValueSummary(name, size=f"len {len(value)}",
                            repr=safe_repr(value, limits.repr_chars, 2, secrets) or "")
    np, pd = _numpy(), _pandas()
    if np is not None and issubclass(cls, np.ndarray):
        return _array_summary(np, value, name, cls is np.ndarray, limits)
    if pd is not None and cls is pd.DataFrame:
        return _from(name, frame_summary(value, limits.head_rows, limits.max_columns,
                                         cells, _dtype_text))
    if pd is not None and cls is pd.Series:
        return _from(name, series_summary(value, limits.head_rows, limits.repr_chars,
                                          cells, _dtype_text))
    polars = sys.modules.get("polars")
    if polars is not None and _one_of(cls, (getattr(polars, "DataFrame", None),
                                           getattr(polars, "Series", None))):
        return _from(name, polars_summary(value, cls is polars.DataFrame, limits.head_rows,
                                          limits.max_columns, cells, _dtype_text))
    shown = safe_repr(value, limits.repr_chars, 2, secrets)
    return ValueSummary(name, repr=shown or "")


def _from(name: str, parts: tuple[str, str, tuple[str, ...]]) -> ValueSummary:
    size, dtype, details = parts
    return ValueSummary(name, size=size, dtype=dtype, details=details)


def _dtype_text(dtype: Any) -> str:
    """A numpy or pandas dtype's name; another library's dtype by its type only."""
    cls = type(dtype)
    module = _MODULE.__get__(cls, type)
    np = _numpy()
    if (np is not None and issubclass(cls, np.dtype)) or (
            isinstance(module, str) and module.split(".")[0] == "pandas"):
        return str(dtype)
    return f"<{type_name(cls)}>"


def _array_summary(np: Any, value: Any, name: str, exact: bool,
                   limits: SummaryLimits) -> ValueSummary:
    shape = np.ndarray.shape.__get__(value)
    dtype = np.ndarray.dtype.__get__(value)
    shown = ""
    if exact and dtype.kind in _SAFE_ARRAY_KINDS and not dtype.hasobject:
        text = np.array2string(value, threshold=ITEMS_SHOWN, edgeitems=3,
                               max_line_width=max(40, limits.repr_chars))
        shown = cut(" ".join(text.split()), limits.repr_chars, limits.secrets)
    return ValueSummary(name, size=f"shape {tuple(shape)}", dtype=_dtype_text(dtype), repr=shown)

