"""A model's price per token from the bundled table: local and unpriced models never cost $0."""

from __future__ import annotations

import math

import pytest

from mercury_nb.contract.spend import Price, Unpriced
from mercury_nb.transport.prices import model_price, model_prices

TABLE = {
    "acme-pro": {"input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05},
    "acme-free-output": {"input_cost_per_token": 4e-07},
    "acme-images": {"output_cost_per_image": 0.04},
    "acme-garbled": {"input_cost_per_token": "a lot", "output_cost_per_token": 1e-05},
    "acme-negative": {"input_cost_per_token": -1e-06, "output_cost_per_token": 1e-05},
    "acme-nan": {"input_cost_per_token": math.nan, "output_cost_per_token": 1e-05},
}


@pytest.mark.parametrize(
    ("model", "price"),
    [
        pytest.param("acme-pro", Price(2.5e-06, 1e-05), id="priced"),
        pytest.param("openai/acme-pro", Price(2.5e-06, 1e-05), id="provider-prefix-dropped"),
        pytest.param("acme-free-output", Price(4e-07, 0.0), id="no-output-price"),
        pytest.param("acme-images", Unpriced("no price known"), id="no-per-token-price"),
        pytest.param("acme-garbled", Unpriced("no price known"), id="unreadable"),
        pytest.param("acme-negative", Unpriced("no price known"), id="negative"),
        pytest.param("acme-nan", Unpriced("no price known"), id="not-a-number"),
        pytest.param("acme/never-heard-of", Unpriced("no price known"), id="unknown"),
        pytest.param("ollama/acme-pro", Unpriced("local model"), id="local-even-if-listed"),
        pytest.param("scripted/demo", Unpriced("local model"), id="scripted"),
    ],
)
def test_model_price(model: str, price: Price | Unpriced) -> None:
    assert model_price(model, TABLE) == price


def test_the_bundled_table_prices_a_cloud_model_and_not_a_local_one() -> None:
    found = model_prices(["gpt-4o-mini", "ollama/llama3"])
    assert isinstance(found["gpt-4o-mini"], Price)
    assert found["gpt-4o-mini"].input_per_token > 0
    assert found["ollama/llama3"] == Unpriced("local model")
