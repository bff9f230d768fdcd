"""Benchmark: how long summarising a user's namespace takes (target: under 50 ms for 200
variables including a 1,000,000-row DataFrame), what ``inspect_variables`` does per call.

Run with ``python bench/bench_namespace_summary.py [--runs N] [--rows N]``. Not part of the
test suite. The namespace holds 200 variables: one DataFrame of ``--rows`` rows (an int, a
float, a string, a datetime and an object column holding instances of a user class), a
1,000,000-element numpy array, and a mix of ints, floats, strings, lists, dicts, numpy
arrays, pandas Series and user objects. Each run calls ``summarize_namespace`` with the
config's default bounds (as inspect_variables does, with the default 12,000-character
budget) and, separately, the DataFrame alone (the ``@df`` attachment).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any


class UserObject:
    """A user's class: never described beyond its type name."""

    def __repr__(self) -> str:
        raise AssertionError("the summary called a user's __repr__")


def build_namespace(rows: int) -> dict[str, Any]:
    import numpy as np
    import pandas as pd

    frame = pd.DataFrame({
        "id": np.arange(rows),
        "price": np.random.default_rng(0).random(rows),
        "city": np.array(["Paris", "Lima", "Oslo", "Kyiv"])[np.arange(rows) % 4],
        "when": pd.date_range("2026-01-01", periods=rows, freq="s"),
        "owner": [UserObject()] * rows,
    })
    namespace: dict[str, Any] = {"df": frame, "big_array": np.arange(1_000_000.0)}
    makers: list[Callable[[int], Any]] = [
        lambda i: i, lambda i: i / 7, lambda i: f"text number {i}" * 3,
        lambda i: list(range(i % 50)), lambda i: {"k": i, "api_key": "sk-" + "x" * 24},
        lambda i: np.arange(1000.0) * i, lambda i: pd.Series(np.arange(500) * i, name=f"s{i}"),
        lambda i: UserObject(),
    ]
    index = 0
    while len(namespace) < 200:
        namespace[f"var_{index}"] = makers[index % len(makers)](index)
        index += 1
    return namespace


def median_ms(action: Callable[[], object], runs: int) -> tuple[float, list[float]]:
    timings: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        timings.append((time.perf_counter() - start) * 1000)
    return statistics.median(timings), timings


def main() -> None:
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.tools.variables import limits_of, summarize_namespace

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()

    config = MercuryConfig()
    limits = limits_of(config)
    namespace = build_namespace(args.rows)
    machine = f"{platform.machine()} {platform.processor()}".strip()
    print(f"machine: {machine}, python {platform.python_version()}")

    def whole() -> object:
        return summarize_namespace(namespace, limits=limits,
                                   max_chars=config.kernel_summary_max_chars)

    report = summarize_namespace(namespace, limits=limits,
                                 max_chars=config.kernel_summary_max_chars)
    print(f"namespace: {len(namespace)} variables, a DataFrame of {args.rows:,} rows; "
          f"{len(report.shown)} described in {len(report.text):,} characters, the rest named")
    med, timings = median_ms(whole, args.runs)
    print(f"summarize_namespace (all): median {med:.1f} ms over {args.runs} runs "
          f"(min {min(timings):.1f}, max {max(timings):.1f}); target < 50 ms")
    med_df, timings_df = median_ms(
        lambda: summarize_namespace(namespace, names=["df"], limits=limits), args.runs)
    print(f"summarize_namespace (@df alone): median {med_df:.1f} ms "
          f"(min {min(timings_df):.1f}, max {max(timings_df):.1f})")


if __name__ == "__main__":
    main()
