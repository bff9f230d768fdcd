"""Estimated cost from litellm's bundled price file, read directly (litellm never imported)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mercury_nb.server import pricing
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


PLANTED = {
    "acme-pro": {"input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05},
    "acme-free-output": {"input_cost_per_token": 4e-07},
    "acme-images": {"output_cost_per_image": 0.04},
    "acme-garbled": {"input_cost_per_token": "a lot", "output_cost_per_token": 1e-05},
}


@pytest.mark.parametrize(
    ("model", "usage", "usd"),
    [
        # 2,000 x $2.50/M + 500 x $10/M = $0.005 + $0.005
        pytest.param("acme-pro", {"prompt_tokens": 2000, "completion_tokens": 500}, 0.01,
                     id="prompt-and-completion"),
        # the provider prefix is dropped when the table names the bare model: 1M x $2.50/M
        pytest.param("openai/acme-pro", {"input_tokens": 1_000_000}, 2.5, id="prefixed-name"),
        # 300 x $10/M; the input and output key spellings of other providers
        pytest.param("acme-pro", {"input_tokens": 0, "output_tokens": 300}, 0.003,
                     id="output-only"),
        # no output price: only the 1,000 prompt tokens x $0.40/M count
        pytest.param("acme-free-output", {"prompt_tokens": 1000, "completion_tokens": 9},
                     0.0004, id="no-output-price"),
        pytest.param("acme-images", {"prompt_tokens": 1}, None, id="no-per-token-price"),
        pytest.param("acme-garbled", {"prompt_tokens": 1}, None, id="unreadable-price"),
    ],
)  # fmt: skip
def test_cost_of_a_planted_price_table(
    model: str, usage: dict[str, int], usd: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pricing, "bundled_table", lambda: PLANTED)
    cost = estimate(model, usage)
    assert cost.usd == (pytest.approx(usd) if usd is not None else None)
    assert cost.reason == (None if usd is not None else "no price known")


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
