"""First contact with a model in a real kernel: a missing key is named in the banner before
any request, and a first ``%%mercury`` cell on an OpenAI-compatible endpoint (the loopback
server) never imports litellm."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from mercury_nb.testing import LoopbackServer, Turn

pytestmark = pytest.mark.kernel

KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "MERCURY_API_KEY",
                 "MERCURY_MODEL", "MERCURY_FALLBACKS", "MERCURY_API_BASE")
MISSING = ("I couldn't finish this one — the model could not be set up: no API key for the "
           "model anthropic/claude-sonnet-4: set ANTHROPIC_API_KEY or MERCURY_API_KEY.")


def run_cells(workdir: Path, sources: list[str]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


def printed(cell: nbformat.NotebookNode) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream")


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
            "from mercury_nb.runs import registry\n"
            "missing = registry.latest().result\n"
            "print(missing.banner)\nprint(missing.status, missing.steps)",
            f"%%mercury --wait --chat --model openai/m --api-base {server.url}\nSay hi.",
            "import sys\nok = registry.latest().result\n"
            "print(ok.status, ok.answer)\nprint('litellm' in sys.modules)",
        ])
        requests = list(server.requests)
    cells = nb.cells
    assert printed(cells[2]).splitlines() == [MISSING, "failed 0"]
    assert printed(cells[1]).rstrip().endswith(MISSING), "the cell's own banner"
    assert printed(cells[4]).splitlines() == ["completed Hello from the endpoint.", "False"]
    assert len(requests) == 1, "the missing-key cell made no request"
