"""The spending core: a task's usage priced, the budget decision and the texts every view shows."""

from __future__ import annotations

import pytest

from mercury_nb.contract.spend import (
    Budget,
    BudgetHit,
    CostBudgetHit,
    Price,
    Spend,
    TokenBudgetHit,
    Unpriced,
    budget_hit,
    budget_text,
    context_percent,
    context_text,
    cost_text,
    cost_usd,
    footer_text,
    raise_hint,
    tokens_text,
    usd_text,
)

PRO = Price(input_per_token=2.5e-06, output_per_token=1e-05)
"""$2.50 per million prompt tokens, $10 per million completion tokens."""
PRICES: dict[str, Price | Unpriced] = {"acme-pro": PRO, "ollama/llama3": Unpriced("local model")}


@pytest.mark.parametrize(
    ("usage", "spend"),
    [
        pytest.param({}, Spend(0, None, ()), id="nothing-reported"),
        # 80,000 x $2.50/M + 6,000 x $10/M = $0.20 + $0.06
        pytest.param({"acme-pro": (80_000, 6_000)}, Spend(86_000, 0.26, ()), id="priced"),
        pytest.param({"ollama/llama3": (900, 100)}, Spend(1000, None, ("ollama/llama3",)),
                     id="local-model-counts-tokens-only"),
        pytest.param({"acme-pro": (80_000, 6_000), "ollama/llama3": (900, 100)},
                     Spend(87_000, 0.26, ("ollama/llama3",)), id="mixed"),
        pytest.param({"never-heard-of": (10, 0)}, Spend(10, None, ("never-heard-of",)),
                     id="a-model-without-a-price-entry"),
        pytest.param({"acme-pro": (0, 0)}, Spend(0, None, ()), id="zero-tokens-say-nothing"),
    ],
)
def test_usage_priced(usage: dict[str, tuple[int, int]], spend: Spend) -> None:
    got = Spend.of(usage, PRICES)
    assert (got.tokens, got.unpriced) == (spend.tokens, spend.unpriced)
    assert got.usd == (pytest.approx(spend.usd) if spend.usd is not None else None)


def test_cost_of_tokens_at_a_price() -> None:
    assert cost_usd(2000, 500, PRO) == pytest.approx(0.01)  # $0.005 + $0.005


@pytest.mark.parametrize(
    ("spend", "budget", "hit"),
    [
        pytest.param(Spend(0, None), Budget(), None, id="no-budget"),
        pytest.param(Spend(10**9, 99.0), Budget(), None, id="no-budget-however-much"),
        pytest.param(Spend(86_000, 0.26), Budget(max_cost_usd=0.5), None, id="under-cost"),
        pytest.param(Spend(172_000, 0.52), Budget(max_cost_usd=0.5),
                     CostBudgetHit(0.52, 0.5), id="over-cost"),
        pytest.param(Spend(1, 0.5), Budget(max_cost_usd=0.5), CostBudgetHit(0.5, 0.5),
                     id="reached-exactly"),
        pytest.param(Spend(5_000_000, None, ("ollama/llama3",)), Budget(max_cost_usd=0.01),
                     None, id="unpriced-tokens-never-reach-a-cost-budget"),
        pytest.param(Spend(2999, None), Budget(max_tokens=3000), None, id="under-tokens"),
        pytest.param(Spend(3600, None, ("scripted/x",)), Budget(max_tokens=3000),
                     TokenBudgetHit(3600, 3000, ("scripted/x",)), id="over-tokens"),
        pytest.param(Spend(5000, 0.6), Budget(max_cost_usd=0.5, max_tokens=1000),
                     CostBudgetHit(0.6, 0.5), id="both-reached-cost-first"),
        pytest.param(Spend(5000, 0.1), Budget(max_cost_usd=0.5, max_tokens=1000),
                     TokenBudgetHit(5000, 1000), id="tokens-reached-cost-not"),
        pytest.param(Spend(5000, 0.6, ("ollama/llama3",)), Budget(max_cost_usd=0.5),
                     CostBudgetHit(0.6, 0.5, ("ollama/llama3",)), id="priced-part-reached"),
    ],
)
def test_budget_hit(spend: Spend, budget: Budget, hit: BudgetHit | None) -> None:
    assert budget_hit(spend, budget) == hit


@pytest.mark.parametrize(
    ("hit", "text"),
    [
        pytest.param(CostBudgetHit(0.52, 0.5), "budget reached: $0.52 of $0.50 spent", id="cost"),
        pytest.param(CostBudgetHit(1.2345, 1.0), "budget reached: $1.23 of $1.00 spent",
                     id="cost-dollars"),
        pytest.param(CostBudgetHit(0.0042, 0.004), "budget reached: $0.004 of $0.004 spent",
                     id="cost-fractions-of-a-cent"),
        pytest.param(CostBudgetHit(0.6, 0.5, ("ollama/llama3",)),
                     "budget reached: $0.60 of $0.50 spent (no price known for ollama/llama3: "
                     "tokens only)", id="cost-with-unpriced-tokens"),
        pytest.param(TokenBudgetHit(12_345, 10_000), "budget reached: 12.3k of 10k tokens used",
                     id="tokens"),
        pytest.param(TokenBudgetHit(3600, 3000, ("scripted/x",)),
                     "budget reached: 3.6k of 3k tokens used (no price known for scripted/x: "
                     "tokens only)", id="tokens-of-an-unpriced-model"),
    ],
)
def test_budget_text(hit: BudgetHit, text: str) -> None:
    assert budget_text(hit) == text


def test_the_hint_names_the_flag_that_raises_the_budget_reached() -> None:
    assert "--max-cost USD" in raise_hint(CostBudgetHit(0.6, 0.5))
    assert "--max-tokens N" in raise_hint(TokenBudgetHit(10, 5))


@pytest.mark.parametrize(
    ("usd", "text"),
    [(0.0, "$0.00"), (0.004, "$0.004"), (0.0042, "$0.004"), (0.00042, "$0.0004"),
     (0.052, "$0.05"), (0.5, "$0.50"), (0.52, "$0.52"), (1.0, "$1.00"), (12.3, "$12.30")],
)
def test_usd_text(usd: float, text: str) -> None:
    assert usd_text(usd) == text


@pytest.mark.parametrize(
    ("tokens", "text"),
    [(1, "1 token"), (950, "950 tokens"), (1000, "1k tokens"), (12_345, "12.3k tokens"),
     (10_000, "10k tokens"), (999_949, "999.9k tokens"), (999_950, "1M tokens"),
     (1_234_567, "1.2M tokens")],
)
def test_tokens_text(tokens: int, text: str) -> None:
    assert tokens_text(tokens) == text


@pytest.mark.parametrize(
    ("spend", "text"),
    [
        pytest.param(Spend(12_345, 0.004), "~$0.004", id="priced"),
        pytest.param(Spend(12_345, None, ("ollama/llama3",)),
                     "cost unknown (no price known for ollama/llama3: tokens only)",
                     id="unpriced-says-so"),
        pytest.param(Spend(12_345, 0.004, ("ollama/llama3",)),
                     "~$0.004 + unknown (no price known for ollama/llama3: tokens only)",
                     id="partly-priced"),
    ],
)
def test_cost_text(spend: Spend, text: str) -> None:
    assert cost_text(spend) == text


@pytest.mark.parametrize(
    ("steps", "spend", "text"),
    [
        pytest.param(4, Spend(12_345, 0.004), "4 steps · 12.3k tokens · ~$0.004", id="footer"),
        pytest.param(1, Spend(950, 0.0004), "1 step · 950 tokens · ~$0.0004", id="one-step"),
        pytest.param(3, Spend(3600, None, ("scripted/x",)),
                     "3 steps · 3.6k tokens · cost unknown (no price known for scripted/x: "
                     "tokens only)", id="local"),
        pytest.param(4, Spend(0, None), "", id="no-tokens-reported-says-nothing"),
    ],
)
def test_footer_text(steps: int, spend: Spend, text: str) -> None:
    assert footer_text(steps, spend) == text


@pytest.mark.parametrize(
    ("prompt", "budget", "percent"),
    [(630, 1000, 63), (0, 1000, 0), (1500, 1000, 150), (5, None, None), (5, 0, None),
     (1, 3, 33)],
)
def test_context_percent(prompt: int, budget: int | None, percent: int | None) -> None:
    assert context_percent(prompt, budget) == percent


def test_context_text() -> None:
    assert context_text(63) == "context 63%"
