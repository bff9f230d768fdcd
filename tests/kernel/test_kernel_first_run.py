"""First contact with a model in a real kernel: a missing key refuses the start before any
request (its error printed once, no task run, no ledger row, so no useless Continue), in
plain and widget modes; a first ``%%mercury`` cell on an OpenAI-compatible endpoint (the
loopback server) never imports litellm nor the openai SDK."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from mercury_nb.kernel.cell_refusals import NOT_STARTED
from mercury_nb.ledger.listing import NO_TASKS
from mercury_nb.testing import LoopbackServer, Turn

pytestmark = pytest.mark.kernel

KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "MERCURY_API_KEY",
                 "MERCURY_MODEL", "MERCURY_FALLBACKS", "MERCURY_API_BASE")
MISSING = ("Not started: no API key for the model anthropic/claude-sonnet-4: set "
           "ANTHROPIC_API_KEY or MERCURY_API_KEY.")


def run_cells(workdir: Path, sources: list[str]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


def printed(cell: nbformat.NotebookNode) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream")


def everything_shown(cell: nbformat.NotebookNode) -> str:
    """Every text the cell's outputs hold: streams, and each mime type of displays."""
    parts = []
    for output in cell.outputs:
        if output.output_type == "stream":
            parts.append(output.text)
        else:
            parts.extend(str(value) for value in output.get("data", {}).values())
            parts.extend(output.get("traceback", []))
    return "\n".join(parts)


@pytest.mark.parametrize("plain", [True, False], ids=["plain", "widget"])
def test_a_missing_key_refuses_the_start_and_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain: bool
) -> None:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    if plain:
        monkeypatch.setenv("MERCURY_PLAIN", "1")
    else:
        monkeypatch.delenv("MERCURY_PLAIN", raising=False)
    nb = run_cells(tmp_path, [
        "%load_ext mercury_nb",
        "%%mercury --wait --model anthropic/claude-sonnet-4\nSay hi.",
        "%%mercury --model anthropic/claude-sonnet-4\nSay hi.",  # in the background
        "from mercury_nb.runs import registry\nprint(registry.latest())",
        "%mercury tasks",
    ])
    for cell in nb.cells[1:3]:
        shown = everything_shown(cell)
        assert shown.count("no API key for the model") == 1, shown
        assert printed(cell).splitlines() == [MISSING, NOT_STARTED]
        assert [o.output_type for o in cell.outputs] == ["stream"]  # no widget, no error
    assert printed(nb.cells[3]).strip() == "None"  # no run was started
    assert printed(nb.cells[4]).strip() == NO_TASKS  # and no failed row to continue


def test_missing_key_and_a_first_cell_without_litellm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MERCURY_PLAIN", "1")
    with LoopbackServer([Turn("Hello from the endpoint.")]) as server:
        nb = run_cells(tmp_path, [
            "%load_ext mercury_nb",
            "%%mercury --wait --model anthropic/claude-sonnet-4\nSay hi.",
            f"%%mercury --wait --chat --model openai/m --api-base {server.url}\nSay hi.",
            "import sys\nfrom mercury_nb.runs import registry\nok = registry.latest().result\n"
            "print(ok.status, ok.answer)\nprint('litellm' in sys.modules, 'openai' in sys.modules)",
        ])
        requests = list(server.requests)
    cells = nb.cells
    assert printed(cells[1]).splitlines() == [MISSING, NOT_STARTED]
    assert printed(cells[3]).splitlines() == ["completed Hello from the endpoint.",
                                                "False False"]
    assert len(requests) == 1, "the missing-key cell made no request"
