"""The event lines: plain words, once, for every kind (each event class says its own); the panel
says the same, for every kind the product records (a new one included, with no row here)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, get_args

import pytest

from mercury_nb.ledger.event_words import KINDS, event_words, words_for
from mercury_nb.ledger.records import LedgerKind
from mercury_nb.runs.events import EVENT_KINDS

ROOT = Path(__file__).resolve().parents[2]
EVENTS_TS = ROOT / "labextension" / "src" / "events.ts"
UNTRUSTED_TS = ROOT / "labextension" / "src" / "untrusted.ts"
TYPESCRIPT = ROOT / "labextension" / "node_modules" / "typescript"

CASES: list[tuple[str, dict[str, Any], str | None]] = [
    ("tool-started", {"step": 2, "name": "run_command", "summary": "run_command: pytest",
                      "command": "pytest -q"}, "runs pytest -q"),
    ("tool-started", {"step": 1, "name": "read_file", "summary": "read_file: a.txt"},
     "reads a.txt"),
    ("tool-started", {"step": 1, "name": "finish_task", "summary": "finish_task"},
     "finish_task"),
    ("tool-finished", {"step": 1, "name": "read_file", "ok": True, "summary": "read_file: a"},
     None),
    ("tool-finished", {"step": 1, "name": "run_command", "ok": False,
                       "summary": "run_command: make"}, "failed: runs make"),
    ("turn-ended", {"verdict": "text-stop", "decision": "next-turn"},
     "the model replied, going on"),
    ("turn-ended", {"verdict": None, "decision": "finish"}, "finishing"),
    ("task-started", {"models": ["openai/a", "openai/b"]}, "started with openai/a → openai/b"),
    ("resume", {"models": ["scripted/demo"]}, "continued with scripted/demo"),
    ("step-started", {"step": 3, "max_steps": 75, "model": "m"}, "step 3"),
    ("text-delta", {"text": "Hello"}, None),
    ("pulse", {"text": "waiting for the model · 8 s", "activity": "waiting for the model",
               "silent_s": 8}, "waiting for the model · 8 s"),
    ("task-finished", {"status": "completed", "verdict": "text-stop"}, "ended: completed"),
    ("stop-requested", {}, "Stop requested"),
    ("provider-switch", {"text": "⚠ a: 503 — switching to b"}, "⚠ a: 503 — switching to b"),
    ("memory-pressure-pause", {"reason": "context", "why": "too big", "prompt_tokens": 9,
                               "budget_tokens": 8, "rss_mb": None, "limit_mb": None},
     "paused on context · 9/8 tokens: too big"),
    ("a-kind-from-later", {"text": "something new"}, "something new"),
    ("notice", {"text": "two\nlines"}, "two\\nlines"),
]


@pytest.mark.parametrize(("kind", "data", "line"), CASES)
def test_each_event_reads_as_plain_words(kind: str, data: dict[str, Any], line: str | None
                                         ) -> None:
    assert event_words(kind, data) == line


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_no_line_names_an_internal_kind_or_repeats_itself(kind: str) -> None:
    data = {"name": "run_command", "summary": "run_command: ls", "command": "ls -la",
            "verdict": "text-stop", "decision": "next-turn", "status": "paused", "step": 1,
            "ok": False, "models": ["m"], "text": "words"}
    line = words_for(kind, data)  # type: ignore[arg-type]
    if line is None:
        return
    for internal in ("tool-started", "turn-ended", "text-stop", "next-turn", "run_command"):
        assert internal not in line
    assert line.count("ls") <= 1


def test_the_table_covers_every_recorded_kind() -> None:
    assert KINDS == EVENT_KINDS
    assert set(get_args(LedgerKind)) <= KINDS


SAMPLES: list[dict[str, Any]] = [
    {},
    {"name": "run_command", "summary": "run_command: ls", "command": "ls -la",
     "verdict": "text-stop", "decision": "next-turn", "status": "paused", "step": 1,
     "ok": False, "models": ["m"], "text": "words", "reason": "memory", "why": "big",
     "prompt_tokens": 9, "budget_tokens": 8, "rss_mb": 700.4, "limit_mb": 512},
    {"name": "read_file", "summary": "read_file: a.txt", "ok": True, "model": "m2",
     "verdict": "interrupted", "decision": "retry-step"},
]
"""Recorded data every kind is tried with, Python against the panel."""


def every_kind_case() -> list[tuple[str, dict[str, Any], str | None]]:
    """Each recorded kind on each sample, with the Python line: the panel must say the same."""
    return [(kind, data, event_words(kind, data)) for kind in sorted(EVENT_KINDS)
            for data in SAMPLES]


def test_every_kind_says_something_about_the_richest_sample() -> None:
    silent = {kind for kind, data, line in every_kind_case() if line is None and data is SAMPLES[1]}
    # the live text; the turn's end says it; a running tool's progress (the status line shows it)
    assert silent == {"text-delta", "step-ended", "tool-progress"}


def ts_kinds() -> set[str]:
    source = EVENTS_TS.read_text(encoding="utf-8")
    block = source[source.index("export type EventKind"):source.index(";", source.index(
        "export type EventKind"))]
    return set(re.findall(r"'([a-z-]+)'", block))


def test_the_panel_knows_the_same_kinds() -> None:
    assert ts_kinds() == set(EVENT_KINDS)


@pytest.mark.skipif(shutil.which("node") is None or not TYPESCRIPT.is_dir(),
                    reason="needs node and labextension/node_modules (build_labextension.sh)")
def test_the_panel_says_the_same_words(tmp_path: Path) -> None:
    """events.ts, transpiled and run by node on the same events, gives the same lines."""
    script = tmp_path / "run.cjs"
    script.write_text(f"""
const ts = require({json.dumps(str(TYPESCRIPT))});
const fs = require('fs');
const path = require('path');
for (const [src, out] of [[{json.dumps(str(UNTRUSTED_TS))}, 'untrusted.mjs'],
                          [{json.dumps(str(EVENTS_TS))}, 'events.mjs']]) {{
  let js = ts.transpileModule(fs.readFileSync(src, 'utf8'), {{
    compilerOptions: {{ module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2020 }}
  }}).outputText;
  js = js.replace("from './untrusted'", "from './untrusted.mjs'");
  fs.writeFileSync(path.join({json.dumps(str(tmp_path))}, out), js);
}}
import({json.dumps(str(tmp_path / "events.mjs"))}).then(m => {{
  const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
  console.log(JSON.stringify(cases.map(([kind, data]) => m.eventWords(kind, data))));
}});
""", encoding="utf-8")
    cases = CASES + every_kind_case()
    done = subprocess.run(["node", str(script)], input=json.dumps(cases), capture_output=True,
                          text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == [line for _, _, line in cases]
