"""Estimated cost from litellm's bundled price file, read directly (litellm never imported)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mercury_nb.server.pricing import estimate, estimate_all
from mercury_nb.transport.model_info import table_file as price_file


def test_the_price_file_is_found_inside_the_installed_litellm() -> None:
    path = price_file()
    assert path is not None and path.parent.name == "litellm"


def test_estimating_a_cost_does_not_import_litellm() -> None:
    code = (
        "import sys\n"
        "from mercury_nb.server.pricing import estimate\n"
        "cost = estimate('gpt-4o-mini', {'prompt_tokens': 1000, 'completion_tokens': 10})\n"
        "assert cost.usd is not None and cost.usd > 0, cost\n"
        "assert 'litellm' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_cost_uses_the_per_token_prices_of_the_file() -> None:
    path = price_file()
    assert path is not None
    entry = json.loads(path.read_text())["gpt-4o-mini"]
    cost = estimate("openai/gpt-4o-mini", {"prompt_tokens": 2000, "completion_tokens": 500})
    expected = 2000 * entry["input_cost_per_token"] + 500 * entry["output_cost_per_token"]
    assert cost.usd == pytest.approx(expected)


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        pytest.param("ollama/llama3", "local model", id="ollama"),
        pytest.param("scripted/demo", "local model", id="scripted"),
        pytest.param("hosted_vllm/my-model", "local model", id="vllm"),
        pytest.param("acme/never-heard-of-it", "no price known", id="unknown"),
    ],
)
def test_local_and_unknown_models_cost_unknown_never_zero(model: str, reason: str) -> None:
    cost = estimate(model, {"prompt_tokens": 10, "completion_tokens": 10})
    assert cost.usd is None and cost.reason == reason


def test_one_estimate_per_model_of_the_usage_map() -> None:
    costs = estimate_all({"gpt-4o-mini": {"prompt_tokens": 1}, "ollama/x": {"prompt_tokens": 1}})
    assert [(c.model, c.usd is None) for c in costs] == [("gpt-4o-mini", False),
                                                          ("ollama/x", True)]
