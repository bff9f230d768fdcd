"""The CLI's human output carries no terminal control sequence from model text, file names
or command output; --json stays exact."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mercury_nb.contract.untrusted import shown_name
from mercury_nb.testing import Turn, call

EVIL_NAME = "\x1b]52;c;ZXZpbA==\x07\x1b[2Jnotes\x1b]0;pwned\x07.md"
EVIL_OUTPUT = "printf '\\033]0;owned\\007\\033[2J\\233Hdone\\n'; exit 3"
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def script() -> list[Turn]:
    return [
        Turn(tool_calls=(call("create_file", path=EVIL_NAME, content="# notes\n"),)),
        Turn(tool_calls=(call("run_command", command=EVIL_OUTPUT),)),
        Turn(text="Wrote \x1b]8;;http://evil.example\x1b\\the notes\x1b]8;;\x1b\\."),
    ]


def run_cli(workspace: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERCURY_")}
    env.update(MERCURY_HOME=str(workspace.parent / "home"), MERCURY_API_KEY="sk-test-key",
               MERCURY_RETRY_BASE_S="0")
    return subprocess.run(
        [sys.executable, "-m", "mercury_nb", "run", "--permissions", "auto", "write the notes",
         "--model", "openai/m",
         "--api-base", url, *extra],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120,
    )


@pytest.mark.parametrize("as_json", [False, True], ids=["human", "json"])
def test_human_output_is_terminal_safe_and_json_is_exact(
    tmp_path: Path, loopback_server, as_json: bool
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = loopback_server(script())
    done = run_cli(workspace, server.url, *(("--json",) if as_json else ()))
    assert done.returncode == 0, done.stderr
    assert not CONTROLS.findall(done.stderr), done.stderr
    if as_json:
        outcome = json.loads(done.stdout)
        assert [c["path"] for c in outcome["changes"]] == [EVIL_NAME]
        assert outcome["answer"] == script()[2].text
    else:
        assert not CONTROLS.findall(done.stdout), done.stdout
        # the name is shown with its controls escaped and quoted, so it cannot act on the
        # terminal nor pass for a line of its own (contract/untrusted.py)
        assert shown_name(EVIL_NAME) in done.stdout
        assert "\\x1b]52" in done.stdout
