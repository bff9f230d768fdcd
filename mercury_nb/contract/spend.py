"""What a task spent (tokens, estimated dollars) and whether a budget is reached, as pure values.

Prices come from a lower layer (:mod:`mercury_nb.transport.prices` reads the price table);
here a model's tokens are a :class:`ModelSpend` with its :class:`Price`, or :class:`Unpriced`
when no price is known (a local model: its tokens count as tokens only, never as a fake $0).
:func:`budget_hit` is the one decision: the task's :class:`Spend` against its
:class:`Budget`, before each model request. The texts every view shows are written here once:
the pause (``budget reached: $0.52 of $0.50 spent``), the footer (``4 steps · 12.3k tokens ·
~$0.004``) and the context use (``context 63%``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import assert_never


@dataclass(frozen=True)
class Price:
    """USD per token of a model's prompt and of its completion."""

    input_per_token: float
    output_per_token: float


@dataclass(frozen=True)
class Unpriced:
    """No price is known for the model: ``local model`` or ``no price known``."""

    reason: str


def cost_usd(prompt_tokens: int, completion_tokens: int, price: Price) -> float:
    """The estimated USD cost of these tokens at ``price`` (rounded to a millionth)."""
    usd = prompt_tokens * price.input_per_token + completion_tokens * price.output_per_token
    return round(usd, 6)


@dataclass(frozen=True)
class Spend:
    """What a task used so far: every token of every model (sub-agents included), the
    estimated dollars of those whose price is known, and the models whose price is not."""

    tokens: int = 0
    usd: float | None = None
    """USD of the priced tokens; None when no reported token has a known price."""
    unpriced: tuple[str, ...] = ()
    """Models that reported tokens but have no known price: counted as tokens only."""

    @classmethod
    def of(cls, usage: Mapping[str, tuple[int, int]],
           prices: Mapping[str, Price | Unpriced]) -> Spend:
        """``usage`` (model -> prompt, completion tokens) priced by ``prices`` (a model
        missing from it is unpriced)."""
        tokens = 0
        usd: float | None = None
        unpriced: list[str] = []
        for model, (prompt, completion) in usage.items():
            if prompt + completion <= 0:
                continue
            tokens += prompt + completion
            match prices.get(model, Unpriced("no price known")):
                case Price() as price:
                    usd = (usd or 0.0) + cost_usd(prompt, completion, price)
                case Unpriced():
                    unpriced.append(model)
                case _ as unreachable:
                    assert_never(unreachable)
        return cls(tokens, None if usd is None else round(usd, 6), tuple(unpriced))


@dataclass(frozen=True)
class Budget:
    """The task's limits (None: no limit): ``max_cost_usd`` and ``max_tokens`` of the config."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None

    @property
    def limited(self) -> bool:
        """Whether any limit is set."""
        return self.max_cost_usd is not None or self.max_tokens is not None


@dataclass(frozen=True)
class CostBudgetHit:
    """The priced tokens cost ``spent_usd``, at or above ``limit_usd``."""

    spent_usd: float
    limit_usd: float
    unpriced: tuple[str, ...] = ()
    """Models whose tokens are not in ``spent_usd`` (no known price)."""


@dataclass(frozen=True)
class TokenBudgetHit:
    """The task used ``tokens``, at or above ``limit``."""

    tokens: int
    limit: int
    unpriced: tuple[str, ...] = ()


BudgetHit = CostBudgetHit | TokenBudgetHit


def budget_hit(spend: Spend, budget: Budget) -> BudgetHit | None:
    """The budget ``spend`` reached (the cost first), or None to send the next request.
    Tokens without a known price never reach a cost budget: they count as tokens only."""
    if budget.max_cost_usd is not None and spend.usd is not None \
            and spend.usd >= budget.max_cost_usd:
        return CostBudgetHit(spend.usd, budget.max_cost_usd, spend.unpriced)
    if budget.max_tokens is not None and spend.tokens >= budget.max_tokens:
        return TokenBudgetHit(spend.tokens, budget.max_tokens, spend.unpriced)
    return None


def usd_text(usd: float) -> str:
    """``$0.52``, ``$0.004``, ``$12.30``: two decimals, more for amounts under ten cents
    (down to their first significant digit)."""
    if usd <= 0:
        return "$0.00"
    decimals = max(2, -math.floor(math.log10(usd)))
    return f"${usd:.{decimals}f}"


def tokens_text(tokens: int) -> str:
    """``950 tokens``, ``12.3k tokens``, ``10k tokens``, ``1.2M tokens``."""
    if tokens < 1000:
        return f"{tokens} token{'' if tokens == 1 else 's'}"
    value, unit = (tokens / 1000, "k") if tokens < 999_950 else (tokens / 1_000_000, "M")
    shown = f"{value:.1f}".removesuffix(".0")
    return f"{shown}{unit} tokens"


UNPRICED = "no price known for {models}: tokens only"
"""How a view says that some tokens have no known price (they count as tokens only)."""


def unpriced_text(models: tuple[str, ...]) -> str:
    return UNPRICED.format(models=", ".join(models))


def cost_text(spend: Spend) -> str:
    """``~$0.004``; ``cost unknown (no price known for m: tokens only)`` when no token has a
    price; ``~$0.004 + unknown (…)`` when only some have."""
    if spend.usd is None:
        return f"cost unknown ({unpriced_text(spend.unpriced)})" if spend.unpriced \
            else "cost unknown"
    known = f"~{usd_text(spend.usd)}"
    return f"{known} + unknown ({unpriced_text(spend.unpriced)})" if spend.unpriced else known


def spend_text(spend: Spend) -> str:
    """``12.3k tokens · ~$0.004``; empty when no token was reported."""
    if spend.tokens <= 0:
        return ""
    return f"{tokens_text(spend.tokens)} · {cost_text(spend)}"


def footer_text(steps: int, spend: Spend) -> str:
    """The banner's footer: ``4 steps · 12.3k tokens · ~$0.004`` (empty when no provider
    reported tokens: nothing was counted, so nothing is said)."""
    spent = spend_text(spend)
    if not spent:
        return ""
    return f"{steps} step{'' if steps == 1 else 's'} · {spent}"


BUDGET_REACHED_COST = "budget reached: {spent} of {limit} spent"
BUDGET_REACHED_TOKENS = "budget reached: {tokens} of {limit} used"
RAISE_COST = ("To go on, continue with a higher budget: --max-cost USD "
              "(or MERCURY_MAX_COST_USD).")
RAISE_TOKENS = ("To go on, continue with a higher budget: --max-tokens N "
                "(or MERCURY_MAX_TOKENS).")


def budget_text(hit: BudgetHit) -> str:
    """``budget reached: $0.52 of $0.50 spent`` (or ``12.3k of 10k tokens used``), and the
    models whose tokens are counted as tokens only."""
    match hit:
        case CostBudgetHit(spent_usd=spent, limit_usd=limit):
            text = BUDGET_REACHED_COST.format(spent=usd_text(spent), limit=usd_text(limit))
        case TokenBudgetHit(tokens=tokens, limit=limit):
            text = BUDGET_REACHED_TOKENS.format(
                tokens=tokens_text(tokens).removesuffix(" tokens"), limit=tokens_text(limit))
        case _ as unreachable:
            assert_never(unreachable)
    return f"{text} ({unpriced_text(hit.unpriced)})" if hit.unpriced else text


def raise_hint(hit: BudgetHit) -> str:
    """How to go on: the flag (or variable) that raises the budget reached."""
    return RAISE_COST if isinstance(hit, CostBudgetHit) else RAISE_TOKENS


def context_percent(prompt_tokens: int, budget_tokens: int | None) -> int | None:
    """The prompt's share of the usable context budget, in whole percent (None: no window
    known, so no budget)."""
    if budget_tokens is None or budget_tokens <= 0:
        return None
    return round(100 * prompt_tokens / budget_tokens)


def context_text(percent: int) -> str:
    """``context 63%``: how full the context window is."""
    return f"context {percent}%"


def with_context(text: str, context: int | None) -> str:
    """``text · context 63%`` (``text`` alone when the context use is unknown)."""
    return text if context is None else f"{text} · {context_text(context)}"
