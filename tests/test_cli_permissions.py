"""Permissions from the command line: a headless ``edits`` task pauses naming the command it
needs and how to allow it (exit 3), ``continue --allow`` runs it, every ask and answer is a
ledger event, and ``permissions`` lists and revokes the workspace's saved rules."""

from __future__ import annotations

import json
from pathlib import Path

from mercury_nb.ledger.store import Ledger
from mercury_nb.testing import Turn, call
from tests.test_cli import run_cli

KEY = {"MERCURY_API_KEY": "sk-perm-test"}
WRITE = "python -c \"open('made.txt', 'w').write('ok')\""


def test_a_headless_edits_task_pauses_naming_pip_install(tmp_path: Path,
                                                         loopback_server) -> None:
    server = loopback_server([Turn(tool_calls=(call("run_command",
                                                    command="pip install requests"),))])
    paused = run_cli("run", "install requests", "--model", "openai/m", "--api-base", server.url,
                     "--json", cwd=tmp_path, env_extra=KEY)
    assert paused.returncode == 3, paused.stderr
    outcome = json.loads(paused.stdout)
    need = ('needs permission to run "pip install requests" — allow it with --allow '
            '"pip install requests" or --permissions auto')
    assert (outcome["status"], outcome["resumable"], outcome["blocker"]) == (
        "paused", True, need)
    assert need in outcome["banner"]
    assert len(server.requests) == 1  # paused before any further request
    shown = run_cli("show", outcome["task_id"], "--json", cwd=tmp_path)
    kinds = [e["kind"] for e in json.loads(shown.stdout)["events"]]
    assert kinds.index("permission-asked") < kinds.index("permission-answered")
    ledger = Ledger(tmp_path / ".mercury-home" / "ledger.sqlite3")
    rows = {e.kind: json.loads(e.data or "{}") for e in ledger.events(outcome["task_id"])}
    ledger.close()
    assert rows["permission-asked"]["command"] == "pip install requests"
    assert rows["permission-asked"]["suggested_rule"] == "pip install requests"
    assert rows["permission-answered"]["answer"] == "deny"
    assert rows["permission-answered"]["why"].startswith("nobody can be asked here")


def test_continue_with_allow_runs_the_command(tmp_path: Path, loopback_server) -> None:
    server = loopback_server([
        Turn(tool_calls=(call("run_command", command=WRITE),)),
        Turn(tool_calls=(call("run_command", command=WRITE),)),
        Turn(text="made.txt is written."),
    ])
    paused = run_cli("run", "write made.txt with python", "--model", "openai/m", "--api-base",
                     server.url, cwd=tmp_path, env_extra=KEY)
    assert paused.returncode == 3, paused.stderr
    assert "needs permission to run" in paused.stdout
    assert not (tmp_path / "made.txt").exists()
    done = run_cli("continue", "--allow", "python -c *", "--json", cwd=tmp_path, env_extra=KEY)
    assert (tmp_path / "made.txt").read_text() == "ok", done.stdout + done.stderr
    assert "needs permission" not in json.loads(done.stdout)["banner"]
    denied = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert denied and denied[0].startswith("denied: nobody can be asked here")


def test_a_chained_command_is_not_matched_by_a_prefix_rule(tmp_path: Path,
                                                           loopback_server) -> None:
    server = loopback_server([Turn(tool_calls=(call("run_command",
                                                    command=f"echo hi; {WRITE}"),))])
    paused = run_cli("run", "say hi", "--allow", "echo*", "--model", "openai/m", "--api-base",
                     server.url, cwd=tmp_path, env_extra=KEY)
    assert paused.returncode == 3, paused.stderr
    assert "--allow for each of its parts, or --permissions auto" in paused.stdout
    assert not (tmp_path / "made.txt").exists()


def test_permissions_lists_and_revokes_the_saved_rules(tmp_path: Path) -> None:
    home = tmp_path / ".mercury-home"
    ledger = Ledger(home / "ledger.sqlite3")
    ledger.save_rule(str(tmp_path.resolve()), "python -m pytest*")
    ledger.save_rule(str(tmp_path.resolve()), "pip install requests")
    ledger.save_rule("/elsewhere", "make")
    ledger.close()
    listed = run_cli("permissions", cwd=tmp_path)
    assert listed.stdout.splitlines() == ["python -m pytest*", "pip install requests"]
    revoked = run_cli("permissions", "--revoke", "pip install requests", cwd=tmp_path)
    assert (revoked.returncode, revoked.stdout.strip()) == (0, "revoked: pip install requests")
    again = run_cli("permissions", "--revoke", "pip install requests", cwd=tmp_path)
    assert again.returncode == 2 and "is not a rule saved for" in again.stderr
    other = tmp_path / "other"
    other.mkdir()
    empty = run_cli("permissions", "--workdir", str(other), cwd=tmp_path)
    assert empty.stdout.strip() == f"No allow rules are saved for {other.resolve()}."
    assert run_cli("permissions", cwd=tmp_path).stdout.splitlines() == ["python -m pytest*"]


def test_help_names_the_modes_and_the_allow_flag(tmp_path: Path) -> None:
    shown = run_cli("run", "--help", cwd=tmp_path).stdout
    assert "--permissions MODE" in shown and "--allow RULE" in shown
    assert "read-only, ask, edits" in shown


def test_read_only_offers_nothing_that_writes_or_runs(tmp_path: Path, loopback_server) -> None:
    server = loopback_server([
        Turn(tool_calls=(call("write_file", path="a.txt", content="x\n"),
                         call("run_command", command=WRITE))),
        Turn(text="I would write a.txt with x."),
    ])
    done = run_cli("run", "write a.txt", "--permissions", "read-only", "--model", "openai/m",
                   "--api-base", server.url, "--json", cwd=tmp_path, env_extra=KEY)
    outcome = json.loads(done.stdout)
    offered = {tool["function"]["name"] for tool in server.requests[0]["tools"]}
    assert {"read_file", "list_dir"} <= offered
    assert not offered & {"write_file", "edit_file", "run_command", "delete_file",
                          "edit_notebook_cell", "run_cells"}
    results = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert results == ["denied: the task runs in read-only mode: it may not write_file a.txt",
                       "denied: the task runs in read-only mode: it may not run "
                       f'"{WRITE}"']
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "made.txt").exists()
    assert outcome["changes"] == []


def _on_a_terminal(args: list[str], cwd: Path, answer: str) -> tuple[int, str]:
    """Run the CLI with stdin and stdout on a pseudo-terminal; type ``answer`` at its first
    question. The exit code and everything it showed there."""
    import os
    import pty
    import select
    import subprocess
    import sys
    import time

    main, other = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERCURY_")}
    env.update({"MERCURY_HOME": str(cwd / ".mercury-home"), "MERCURY_RETRY_BASE_S": "0", **KEY})
    process = subprocess.Popen([sys.executable, "-m", "mercury_nb", *args], cwd=cwd, env=env,
                               stdin=other, stdout=other, stderr=other, close_fds=True)
    os.close(other)
    shown, answered = b"", False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the terminal's other end closed: the process is gone
                break
            if not chunk:
                break
            shown += chunk
        if not answered and b"> " in shown:
            os.write(main, answer.encode() + b"\n")
            answered = True
        if process.poll() is not None and not ready:
            break
    code = process.wait(timeout=30)
    os.close(main)
    return code, shown.decode("utf-8", "replace").replace("\r\n", "\n")


def test_ask_mode_asks_on_the_terminal_with_the_diff(tmp_path: Path, loopback_server) -> None:
    (tmp_path / "notes.md").write_text("# Notes\nkeep\nold line\n")
    server = loopback_server([
        Turn(tool_calls=(call("write_file", path="notes.md",
                              content="# Notes\nkeep\nnew line\n"),)),
        Turn(tool_calls=(call("read_file", path="notes.md"),)),
        Turn(text="notes.md now says new line."),
    ])
    code, shown = _on_a_terminal(["run", "change the old line of notes.md", "--permissions",
                                  "ask", "--model", "openai/m", "--api-base", server.url],
                                 tmp_path, "o")
    assert "mercury asks permission to write_file notes.md" in shown, shown
    assert "  -old line\n  +new line\n" in shown
    assert "[o] Allow once   [d] Deny" in shown
    assert (tmp_path / "notes.md").read_text() == "# Notes\nkeep\nnew line\n"
    assert code == 0, shown


def test_ask_mode_denied_on_the_terminal_pauses_naming_it(tmp_path: Path,
                                                            loopback_server) -> None:
    server = loopback_server([
        Turn(tool_calls=(call("write_file", path="a.txt", content="x\n"),)),
        Turn(text="You said no, so a.txt is not written."),
    ])
    code, shown = _on_a_terminal(["run", "write a.txt", "--permissions", "ask", "--model",
                               "openai/m", "--api-base", server.url], tmp_path, "d")
    assert "mercury asks permission to write_file a.txt" in shown, shown
    assert not (tmp_path / "a.txt").exists()
    denied = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert denied == ["denied: the user denied it"]
    # no forced rounds past the user's no: an honest pause that names it, and how to allow it
    assert len(server.requests) == 2 and "getting started" not in shown
    assert ("you denied permission to write_file a.txt — allow it with --permissions auto"
            in shown)
    assert code == 3
