"""The shipped demo models: named without registering, stateless, the CLI runs one offline."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.transport.demo_models import DEMOS, DemoModel
from mercury_nb.transport.factory import resolve_model
from mercury_nb.transport.model_registry import lookup_scripted, registered_names
from mercury_nb.transport.protocol import FinishChunk, ModelRequest, TextChunk, ToolCallChunk

ROOT = Path(__file__).resolve().parents[2]


def play(model: DemoModel, assistants: int) -> list[object]:
    messages = [{"role": "user", "content": "go"}]
    messages += [{"role": "assistant", "content": "x"}] * assistants

    async def collect() -> list[object]:
        return [chunk async for chunk in model.stream(ModelRequest(messages=tuple(messages)))]

    return asyncio.run(collect())


def test_the_set_is_named_and_described() -> None:
    assert {"scripted/quickstart", "scripted/walkthrough"} <= set(DEMOS)
    assert all(demo.description.startswith("demo, offline") for demo in DEMOS.values())


def test_a_demo_resolves_by_name_without_registering(tmp_path: Path) -> None:
    config = MercuryConfig(workdir=tmp_path, model="scripted/quickstart")
    assert resolve_model("scripted/quickstart", config) is DEMOS["scripted/quickstart"]
    assert "scripted/quickstart" not in registered_names()  # a demo, not a registered fake


def test_an_unknown_name_lists_the_demos() -> None:
    with pytest.raises(LookupError, match="demos: scripted/quickstart, scripted/walkthrough"):
        lookup_scripted("scripted/nope")


@pytest.mark.parametrize(
    ("assistants", "kind", "finish"),
    [
        pytest.param(0, ToolCallChunk, "tool_calls", id="first-step-writes"),
        pytest.param(1, TextChunk, "stop", id="claims-done"),
        pytest.param(2, ToolCallChunk, "tool_calls", id="runs-the-test"),
        pytest.param(3, TextChunk, "stop", id="reports"),
        pytest.param(9, TextChunk, "stop", id="past-the-end-repeats-the-last"),
    ],
)
def test_the_step_comes_from_the_request(assistants: int, kind: type, finish: str) -> None:
    chunks = play(DEMOS["scripted/quickstart"], assistants)
    assert isinstance(chunks[0], kind)
    assert chunks[-1] == FinishChunk(finish)


def test_two_tasks_never_share_a_position() -> None:
    demo = DEMOS["scripted/quickstart"]
    first, again = play(demo, 0), play(demo, 0)
    assert first == again
    call = next(c for c in first if isinstance(c, ToolCallChunk))
    assert call.name == "create_file" and json.loads(call.arguments)["path"] == "greet.py"


def run_demo_cli(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``python -m mercury_nb run`` on ``scripted/quickstart`` in ``tmp_path``."""
    env = {**os.environ, "MERCURY_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "mercury_nb", "run", "Write greet(name) with a test",
         "--model", "scripted/quickstart", "--workdir", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=120)


def test_the_cli_names_a_demo(tmp_path: Path) -> None:
    done = run_demo_cli(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ Task complete" in done.stdout
    assert "registered: none" not in done.stdout + done.stderr
    assert (tmp_path / "greet.py").read_text().startswith("def greet(name):")


def test_the_demo_completes_in_a_folder_that_already_has_another_test_greet(
    tmp_path: Path,
) -> None:
    # where a new user first runs it from the panel: the folder the file browser shows, which
    # holds the quickstart's own workspace (another test_greet.py) a level down; a bare
    # `pytest` collected both and stopped on the clash (exit 2), so the demo paused
    earlier = tmp_path / "workspaces" / "quickstart-1"
    earlier.mkdir(parents=True)
    (earlier / "greet.py").write_text('def greet(name):\n    return "hi"\n')
    (earlier / "test_greet.py").write_text("from greet import greet\n\n\ndef test_it():\n"
                                           "    assert greet('x')\n")
    done = run_demo_cli(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ Verified: python -m pytest -q test_greet.py ✓" in done.stdout
