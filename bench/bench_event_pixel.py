"""Benchmark: from an event recorded in another process to its pixel in the panel, in Chromium
(target: p95 ≤ 300 ms).

Run with ``python bench/bench_event_pixel.py [--steps 60] [--think 0.5]`` (needs Debian's
chromium and Python Playwright, as the browser tests). Not part of the test suite. It starts a
``jupyter lab`` as tests/browser does, opens the mercury panel in headless Chromium, then runs
a task in another process (``python -m mercury_nb run`` on the same ledger, against a
loopback OpenAI-compatible server in this process whose every reply "thinks" ``--think``
seconds before its first token): ``--steps`` steps, each a ``read_file``. A MutationObserver
in the page stamps the wall-clock time (``Date.now()``) the task's row first shows
``step N``; the latency of step N is that stamp minus the ``at`` of the task's
``step-started`` event for step N as the ledger kept it (stamped by the recording process
when the step began, before its batched write). A step never shown is counted as missed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 300.0
WATCH = """() => { window.__seen = {};
  const note = () => { for (const el of document.querySelectorAll('.jp-mercury-pulse')) {
      const m = /step (\\d+)/.exec(el.textContent || '');
      if (m && !(m[1] in window.__seen)) { window.__seen[m[1]] = Date.now(); } } };
  window.__watch = new MutationObserver(note);
  window.__watch.observe(document.body, {childList: true, subtree: true, characterData: true});
}"""


def script(steps: int, think: float) -> list[Any]:
    from mercury_nb.testing import Stall, Turn, call

    return [*(Turn(tool_calls=(call("read_file", path=f"f{i}.txt"),), fault=Stall(seconds=think))
              for i in range(1, steps)), Turn(text="Done reading.", fault=Stall(seconds=think))]


def run_elsewhere(lab: Any, url: str, steps: int) -> None:
    """The task, in a process of its own on the lab's ledger."""
    folder = lab.root / "px"
    folder.mkdir()
    for index in range(steps + 1):
        (folder / f"f{index}.txt").write_text(f"file {index}\n" * 20)
    env = {**lab.env, "OPENAI_API_KEY": "sk-bench", "MERCURY_HOME": str(lab.home),
           "MERCURY_CONTEXT_WINDOW": "400000"}
    subprocess.run([sys.executable, "-m", "mercury_nb", "run", "Read the files.",
                    "--model", "openai/px", "--api-base", url, "--workdir", str(folder),
                    "--max-steps", str(steps + 5), "--permissions", "auto"],
                   env=env, check=True, capture_output=True, timeout=600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--think", type=float, default=0.5)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    from conftest import CHROMIUM, CHROMIUM_ARGS, running_lab  # the browser tests' lab
    from playwright.sync_api import sync_playwright

    from mercury_nb.runs import task_detail
    from mercury_nb.testing import LoopbackServer

    print(f"machine: {platform.machine()}, python {platform.python_version()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    with (tempfile.TemporaryDirectory() as folder, running_lab(Path(folder)) as lab,
          LoopbackServer({"px": script(args.steps, args.think)}) as server,
          sync_playwright() as driver):
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page: Any = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{lab.base_url}lab?reset&token={lab.token}")
        page.wait_for_selector("#jp-main-dock-panel", state="attached", timeout=60_000)
        page.locator('li[data-id="mercury-panel"]').click()
        page.locator(".jp-mercury-panel").wait_for()
        page.wait_for_timeout(1000)  # the event socket open
        page.evaluate(WATCH)
        run_elsewhere(lab, server.url, args.steps)
        page.wait_for_timeout(1500)
        seen = {int(step): float(at) for step, at in page.evaluate("window.__seen").items()}
        [task] = lab.api("tasks")["tasks"]
        browser.close()
        found = task_detail(task["id"], home=lab.home)
        assert found is not None
        started = {int(e.data["step"]): e.at for e in found.events
                   if e.kind == "step-started" and isinstance(e.data.get("step"), int)}
    latencies = sorted(seen[step] - 1000 * at for step, at in started.items() if step in seen)
    missed = sorted(set(started) - set(seen))
    if not latencies:
        raise SystemExit(f"no step shown; recorded {len(started)}")
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    print(f"{len(started)} steps recorded, {len(latencies)} shown, {len(missed)} never shown"
          f"{' ' + str(missed[:10]) if missed else ''}")
    print(f"event → pixel: median {statistics.median(latencies):.0f} ms, p95 {p95:.0f}, "
          f"min {latencies[0]:.0f}, max {latencies[-1]:.0f} (target p95 ≤ {TARGET_MS:.0f} ms); "
          f"load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
