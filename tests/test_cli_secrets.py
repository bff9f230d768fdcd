"""Planted secrets never reach the ledger, the CLI's output or a request body (issue 11.1)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from mercury_nb.testing import Turn, call
from mercury_nb.testing.script import HttpError
from tests.test_cli import run_cli

OPENAI_KEY = "sk-plantedOpenAIkey0123456789"
SERVICE_TOKEN = "tok-planted-service-4711"
DB_PASSWORD = "pw-planted-db-9876"
AWS_SECRET = "aws-planted-secret-abcdef"  # only in .env, never in the environment
MERCURY_KEY = "mk-planted-mercury-key-555"
PLANTED = (OPENAI_KEY, SERVICE_TOKEN, DB_PASSWORD, AWS_SECRET, MERCURY_KEY)


def _all_bytes(folder: Path) -> bytes:
    """Every byte of every file under ``folder`` (the SQLite file, -wal, -shm, journals)."""
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def _leaks(blob: bytes | str) -> list[str]:
    data = blob.encode("utf-8", "surrogateescape") if isinstance(blob, str) else blob
    return [secret for secret in PLANTED if secret.encode() in data]


def test_planted_secrets_reach_no_ledger_output_or_request(
    tmp_path: Path, loopback_server
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".env").write_text(
        f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}\nDB_PASSWORD={DB_PASSWORD}\n"
    )
    (workspace / f"{OPENAI_KEY}.txt").write_text("named after a key\n")
    (workspace / "config.ini").write_text(f"[service]\ntoken = {SERVICE_TOKEN}\n")
    home = tmp_path / "home"
    server = loopback_server([
        Turn(tool_calls=(call("list_dir", path="."),)),
        Turn(tool_calls=(call("read_file", path=".env"), call("read_file", path="config.ini"))),
        Turn(tool_calls=(call("run_command", command="echo $MY_SERVICE_TOKEN; printenv"),)),
        Turn(fault=HttpError(500, message=f"upstream rejected key {OPENAI_KEY} for {DB_PASSWORD}")),
        Turn(text="The workspace holds a .env file, a config and a text file."),
    ])
    env = {
        "MERCURY_HOME": str(home),
        "MERCURY_API_KEY": MERCURY_KEY,
        "OPENAI_API_KEY": OPENAI_KEY,
        "MY_SERVICE_TOKEN": SERVICE_TOKEN + "\n",  # a value ending in a newline
        "DB_PASSWORD": f"  {DB_PASSWORD} ",
    }
    result = run_cli(
        "run", "--permissions", "auto", "What files are in this workspace?", "--chat", "--json",
        "--model", "openai/m", "--api-base", server.url, "--workdir", str(workspace),
        cwd=tmp_path, env_extra=env,
    )
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "completed"
    listed = run_cli("tasks", "--json", cwd=tmp_path, env_extra=env)
    shown = run_cli("show", outcome["task_id"], "--json", cwd=tmp_path, env_extra=env)
    human = run_cli("show", outcome["task_id"], cwd=tmp_path, env_extra=env)
    outputs: list[subprocess.CompletedProcess[str]] = [result, listed, shown, human]

    requests = json.dumps(server.requests)
    assert "***" in requests  # the secrets were there to be masked
    assert _leaks(requests) == []
    for output in outputs:
        assert _leaks(output.stdout + output.stderr) == [], output.args
    files = sorted(p.name for p in home.iterdir())
    assert any(name.startswith("ledger.sqlite3") for name in files)
    assert _leaks(_all_bytes(home)) == []
    # the untouched files' contents were never copied into the ledger at all
    assert b"named after a key" not in _all_bytes(home)
