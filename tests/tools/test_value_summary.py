"""The known-safe summaries of values and namespaces: tables of values, and values whose own
code must never run (a ``__repr__`` that would hang, a faked ``__class__``, a metaclass)."""

from __future__ import annotations

import datetime
from typing import Any

import numpy as np
import pandas as pd
import pytest

from mercury_nb.tools.value_summary import SummaryLimits, safe_repr, summarize_value, type_name
from mercury_nb.tools.variables import (
    MORE,
    listed_names,
    mentions,
    summarize_namespace,
)


class Trap:
    """Every way of describing it by its own code fails the test."""

    def __repr__(self) -> str:
        raise AssertionError("__repr__ of a user object was called")

    __str__ = __repr__

    def __len__(self) -> int:
        raise AssertionError("__len__ of a user object was called")


class FakeClass(Trap):
    """Also lies about its class (``isinstance`` would read this property)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise AssertionError("__class__ of a user object was read")


class Meta(type):
    def __getattribute__(cls, name: str) -> Any:
        if name in ("__qualname__", "__module__", "__name__", "__mro__"):
            raise AssertionError(f"the metaclass ran for {name}")
        return super().__getattribute__(name)


class Spooky(metaclass=Meta):
    pass


class LyingArray(np.ndarray):
    @property
    def shape(self) -> Any:  # type: ignore[override]
        raise AssertionError("an ndarray subclass's own shape ran")


class MyList(list):  # type: ignore[type-arg]
    def __repr__(self) -> str:
        raise AssertionError("a list subclass's __repr__ ran")


HERE = __name__
LIMITS = SummaryLimits(repr_chars=60, head_rows=2, max_columns=3)


@pytest.mark.parametrize(
    ("value", "type_", "size", "dtype", "shown"),
    [
        pytest.param(3, "int", "", "", "3", id="int"),
        pytest.param(10**5000, "int", "", "", "<int of 16610 bits>", id="huge-int"),
        pytest.param("hé", "str", "len 2", "", "'hé'", id="str"),
        pytest.param("x" * 500, "str", "len 500", "", "'" + "x" * 58 + "…", id="long-str"),
        pytest.param([1, "a", None], "list", "len 3", "", "[1, 'a', None]", id="list"),
        pytest.param((1,), "tuple", "len 1", "", "(1,)", id="one-tuple"),
        pytest.param(set(), "set", "len 0", "", "set()", id="empty-set"),
        pytest.param({"a": [Trap()]}, "dict", "len 1", "", "{'a': [<" + HERE + ".Trap>]}",
                     id="dict-holding-an-object"),
        pytest.param({"api_key": "hunter2", "n": 1}, "dict", "len 2", "",
                     "{'api_key': ***, 'n': 1}", id="dict-secret-key"),
        pytest.param(datetime.date(2026, 1, 2), "datetime.date", "", "",
                     "datetime.date(2026, 1, 2)", id="date"),
        pytest.param(np.float32(1.5), "numpy.float32", "", "", "np.float32(1.5)",
                     id="numpy-scalar"),
        pytest.param(np.arange(6).reshape(2, 3), "numpy.ndarray", "shape (2, 3)", "int64",
                     "[[0 1 2] [3 4 5]]", id="array"),
        pytest.param(np.array([Trap()]), "numpy.ndarray", "shape (1,)", "object", "",
                     id="object-array"),
        pytest.param(np.zeros(3).view(LyingArray),
                     f"{HERE}.LyingArray", "shape (3,)", "float64", "",
                     id="array-subclass"),
        pytest.param(MyList([1]), f"{HERE}.MyList", "", "", "",
                     id="list-subclass"),
        pytest.param(Trap(), f"{HERE}.Trap", "", "", "",
                     id="user-object"),
        pytest.param(FakeClass(), f"{HERE}.FakeClass", "", "", "",
                     id="fake-class"),
        pytest.param(Spooky(), f"{HERE}.Spooky", "", "", "",
                     id="metaclass-property"),
        pytest.param(len, "builtin_function_or_method", "", "", "<built-in function len>",
                     id="builtin"),
    ],
)
def test_values_are_summarised_safely(value: Any, type_: str, size: str, dtype: str,
                                      shown: str) -> None:
    summary = summarize_value(value, LIMITS)
    assert (summary.type_name, summary.size, summary.dtype, summary.repr) == (
        type_, size, dtype, shown)


def test_a_dataframe_shows_columns_dtypes_and_first_rows_never_its_objects() -> None:
    frame = pd.DataFrame({"a": [1, 2, 3], "b": [0.5, 1.5, 2.5], "o": [Trap()] * 3,
                          "d": [4, 5, 6]})
    summary = summarize_value(frame, LIMITS)
    assert (summary.type_name, summary.size) == ("pandas.DataFrame", "shape (3, 4)")
    columns, heading, header, *rows = summary.details
    assert columns == "columns (4): a int64, b float64, o object, … 1 more"
    assert heading == "first 2 rows:"
    assert header.split() == ["a", "b", "o"]
    assert rows[0].split() == ["0", "1", "0.5", f"<{HERE}.Trap>"]
    assert len(rows) == 2


def test_a_series_shows_its_name_dtype_and_first_values() -> None:
    summary = summarize_value(pd.Series([1.5, 2.5, 3.5], name="price"), LIMITS)
    assert (summary.size, summary.dtype) == ("len 3", "float64")
    assert summary.details == ("name: price", "first 2 values: 1.5, 2.5")


def test_type_names_never_run_a_metaclass() -> None:
    assert type_name(Spooky) == f"{HERE}.Spooky"
    assert safe_repr(Spooky, 80) == f"<class {HERE}.Spooky>"


class Comparing(type):
    """A metaclass whose ``__eq__`` and ``__hash__`` are user code: they must never run."""

    calls = 0

    def __eq__(cls, other: object) -> bool:
        Comparing.calls += 1
        return False

    def __hash__(cls) -> int:
        Comparing.calls += 1
        return 0


class Compared(metaclass=Comparing):
    pass


def test_a_value_of_a_metaclass_with_its_own_eq_is_summarised_without_calling_it() -> None:
    Comparing.calls = 0
    summary = summarize_value(Compared(), LIMITS)
    assert summary.type_name == f"{HERE}.Compared" and summary.repr == ""
    assert safe_repr([Compared()], 80) == f"[<{HERE}.Compared>]"
    assert Comparing.calls == 0


@pytest.mark.parametrize(
    ("text", "found"),
    [
        pytest.param("plot sales by month from @sales", ("sales",), id="one"),
        pytest.param("compare @df and @df2, then @df.", ("df", "df2"), id="repeated"),
        pytest.param("mail me@example.com", (), id="address"),
        pytest.param("add @dataclass(frozen=True) and @pytest.fixture", (), id="decorators"),
        pytest.param("@a_1 first", ("a_1",), id="at-start"),
    ],
)
def test_mentions(text: str, found: tuple[str, ...]) -> None:
    assert mentions(text) == found


def test_the_listing_leaves_out_private_hidden_modules_and_the_agents_objects() -> None:
    from mercury_nb.tools.kernel_access import NamespaceKernel

    namespace = {"_private": 1, "In": [], "np": np, "handle": NamespaceKernel(), "df": 1,
                 "x": 2}
    assert listed_names(namespace, frozenset({"In"})) == ["df", "x"]


def test_secret_names_and_key_looking_strings_show_the_mask() -> None:
    namespace = {"api_key": "abc123def456", "note": "key sk-abcdefghijklmnopqrstu here",
                 "OPENAI_TOKEN": "zzzzzzzz"}
    report = summarize_namespace(namespace)
    assert report.text.splitlines() == [
        "api_key = *** (str)",
        "note: str · len 33 = 'key sk-*** here'",
        "OPENAI_TOKEN = *** (str)",
    ]
    assert "abc123" not in report.text and "zzzz" not in report.text


def test_secret_named_columns_and_series_show_the_mask() -> None:
    frame = pd.DataFrame({"user": ["ann", "bob"], "password": ["hunter2", "x9x9x9"],
                          "api_key": ["abc123xyz", "q1w2e3r4"]})
    report = summarize_namespace({"df": frame,
                                  "pw": pd.Series(["hunter2"], name="password")})
    assert report.text.splitlines()[2:] == [
        "  first 2 rows:",
        "       user  password  api_key",
        "    0   ann       ***      ***",
        "    1   bob       ***      ***",
        "pw: pandas.Series · len 1 · dtype str",
        "  name: password",
        "  first 1 values: ***"]
    for secret in ("hunter2", "x9x9x9", "abc123xyz", "q1w2e3r4"):
        assert secret not in report.text


def test_named_variables_and_unknown_names() -> None:
    report = summarize_namespace({"a": 1, "b": 2, "np": np}, names=["b", "nope", "np"])
    assert report.shown == ("b",)
    assert report.missing == ("nope", "np")
    assert report.text.splitlines() == [
        "b: int = 2",
        "there is no variable named nope in your kernel",
        "there is no variable named np in your kernel",
    ]


def test_the_budget_bounds_the_text_and_names_what_it_left_out() -> None:
    namespace = {f"v{i}": "x" * 100 for i in range(200)}
    report = summarize_namespace(namespace, max_chars=2000)
    assert len(report.text) <= 2000
    assert 0 < len(report.shown) < 200
    last = report.text.splitlines()[-1]
    assert last.startswith(MORE.split("{count}")[0])
    assert f"{200 - len(report.shown)} more" in last


def test_one_variable_over_the_budget_shows_its_head() -> None:
    frame = pd.DataFrame({f"column_{i}": range(3) for i in range(30)})
    report = summarize_namespace({"wide": frame},
                                 limits=SummaryLimits(max_columns=30), max_chars=600)
    assert len(report.text) <= 600 and report.text.startswith("wide: pandas.DataFrame")
