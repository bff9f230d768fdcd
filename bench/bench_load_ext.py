"""Benchmark: how long ``%load_ext mercury_nb`` takes in a fresh process (target: under 0.3 s).

Run: ``python bench/bench_load_ext.py [--runs N]``. Each run starts a new interpreter, builds an
IPython shell (not timed), then times only ``%load_ext mercury_nb``, and checks that litellm
was not imported. Prints every run and the median. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

TARGET_S = 0.3

PROBE = """
import json, sys, time
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
start = time.perf_counter()
ip.run_line_magic("load_ext", "mercury_nb")
elapsed = time.perf_counter() - start
print(json.dumps({"seconds": elapsed, "litellm": "litellm" in sys.modules}))
"""


def one_run() -> tuple[float, bool]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return float(report["seconds"]), bool(report["litellm"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes to time (default 7)")
    runs = parser.parse_args().runs
    times = []
    for number in range(1, runs + 1):
        seconds, litellm_loaded = one_run()
        times.append(seconds)
        print(f"run {number}: {seconds * 1000:.1f} ms")
        if litellm_loaded:
            print("FAIL: %load_ext mercury_nb imported litellm")
            return 1
    median = statistics.median(times)
    verdict = "OK" if median < TARGET_S else "OVER TARGET"
    print(f"median of {runs}: {median * 1000:.1f} ms (target < {TARGET_S * 1000:.0f} ms) {verdict}")
    return 0 if median < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
