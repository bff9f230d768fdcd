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
