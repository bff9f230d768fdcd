"""Budgets from the command line: ``run --max-cost`` pauses (exit 3) at the step the scripted
usage says, a continue under the same budget pauses again before any request, and
``continue --max-cost 1`` completes, verified; ``--json`` carries ``cost_usd``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mercury_nb.contract.spend import Price, Spend, cost_usd, footer_text
from mercury_nb.testing import Turn, call
from mercury_nb.transport.prices import model_price
from tests.test_cli import run_cli

MODEL = "openai/gpt-4o-mini"
KEY = {"MERCURY_API_KEY": "sk-budget-test"}


def step_usage() -> tuple[int, int]:
    """Tokens that cost about $0.15 of prompt and $0.06 of completion at the table's price
    (1,000,000 and 100,000 at $0.15/M and $0.60/M): $0.21 a step."""
    price = model_price(MODEL)
    assert isinstance(price, Price), price
    return round(0.15 / price.input_per_token), round(0.06 / price.output_per_token)


def test_a_cost_budget_pauses_and_continue_with_a_higher_one_completes(
    tmp_path: Path, loopback_server
) -> None:
    usage = step_usage()
    price = model_price(MODEL)
    assert isinstance(price, Price)
    per_step = cost_usd(*usage, price)
    assert 0.5 / 3 < per_step < 0.5 / 2  # three steps reach $0.50, two do not
    server = loopback_server([
        Turn(tool_calls=(call("create_file", path="calc.py",
                              content="def add(a, b):\n    return a + b\n"),), usage=usage),
        Turn(tool_calls=(call("create_file", path="test_calc.py",
                              content="from calc import add\n\n\ndef test_add():\n"
                                      "    assert add(2, 3) == 5\n"),), usage=usage),
        Turn(tool_calls=(call("run_command", command="python -m pytest -q test_calc.py"),),
             usage=usage),
        Turn(text="add() is in calc.py and its test passes.", usage=usage),
    ])
    paused = run_cli("run", "--permissions", "auto",
                     "add calc.py with a passing test", "--model", MODEL, "--api-base",
                     server.url, "--max-cost", "0.5", "--json", cwd=tmp_path, env_extra=KEY)
    assert paused.returncode == 3, paused.stderr
    outcome = json.loads(paused.stdout)
    spent = 3 * per_step
    assert (outcome["status"], outcome["steps"], outcome["resumable"]) == ("paused", 3, True)
    assert outcome["cost_usd"] == pytest.approx(spent, abs=1e-6)
    assert outcome["unpriced"] == []
    assert outcome["banner"].split("\n")[0] == (
        f"I've paused — budget reached: ${spent:.2f} of $0.50 spent.")
    assert len(server.requests) == 3

    # the same budget: paused again before any request, the footer says what was spent
    again = run_cli("continue", cwd=tmp_path, env_extra=KEY)
    assert again.returncode == 3, again.stderr
    assert len(server.requests) == 3
    tokens = 3 * sum(usage)
    lines = again.stdout.strip().split("\n")
    assert lines[0] == f"I've paused — budget reached: ${spent:.2f} of $0.50 spent."
    assert lines[-1] == footer_text(3, Spend(tokens, round(spent, 6)))
    assert lines[-1].startswith("3 steps · 3.3M tokens · ~$0.6")

    done = run_cli("continue", "--max-cost", "1", "--json", cwd=tmp_path, env_extra=KEY)
    assert done.returncode == 0, done.stderr
    finished = json.loads(done.stdout)
    assert (finished["status"], finished["steps"]) == ("completed", 4)
    assert finished["banner"].startswith("✓ Task complete")
    assert finished["cost_usd"] == pytest.approx(4 * per_step, abs=1e-6)
    assert finished["usage"][MODEL]["total_tokens"] == 4 * sum(usage)
    assert "sk-budget-test" not in paused.stdout + again.stdout + done.stdout


def test_a_bad_budget_is_refused_before_anything_starts(tmp_path: Path) -> None:
    result = run_cli("run", "x", "--max-cost", "-1", "--model", MODEL, cwd=tmp_path,
                     env_extra=KEY)
    assert result.returncode == 2
    assert "max_cost_usd" in result.stderr
    result = run_cli("run", "x", "--max-tokens", "0", "--model", MODEL, cwd=tmp_path,
                     env_extra=KEY)
    assert result.returncode == 2
    assert "max_tokens" in result.stderr
