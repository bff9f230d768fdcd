"""The spending edge: prices a task's usage and checks its budgets before every model request.

The decision is the pure :func:`~mercury_nb.contract.spend.budget_hit`; here the usage the
providers reported (``TaskSession.task_usage``: every model, every sub-agent, every earlier
run of the task) is priced once per model (:func:`~mercury_nb.transport.prices.model_prices`,
off the loop: the first read parses the price table), and what cannot be counted is said
once per task as a notice: a model without a known price under a cost budget (its tokens
count as tokens only), and a budget with a provider that reports no usage at all.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from mercury_nb.agent.events import EventSink, Notice
from mercury_nb.agent.session import TaskSession
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.spend import Budget, BudgetHit, Price, Spend, Unpriced, budget_hit
from mercury_nb.transport.prices import model_prices

UNPRICED_NOTICE = ("No price is known for {model} ({reason}): the cost budget counts its "
                   "tokens as tokens only; --max-tokens caps them.")
NO_USAGE_NOTICE = ("{model} reports no token usage: the budget cannot count what its "
                   "replies use.")


def budget_of(config: MercuryConfig) -> Budget:
    return Budget(config.max_cost_usd, config.max_tokens)


async def priced(usage: dict[str, tuple[int, int]],
                 prices: dict[str, Price | Unpriced] | None = None) -> Spend:
    """``usage`` as a :class:`Spend`; ``prices`` caches each model's price (filled here)."""
    known = prices if prices is not None else {}
    missing = [name for name in usage if name not in known]
    if missing:
        known.update(await asyncio.to_thread(model_prices, missing))
    return Spend.of(usage, known)


@dataclass
class SpendMeter:
    """One loop's budget check: the prices it looked up, and the notices it gave."""

    config: MercuryConfig
    prices: dict[str, Price | Unpriced] = field(default_factory=dict)
    told: set[str] = field(default_factory=set)
    spend: Spend = field(default_factory=Spend)
    """The task's spend as of the last check (what the next step's start shows)."""
    at_check: dict[str, int] = field(default_factory=dict)
    """Tokens per model at the last check."""

    async def check(self, session: TaskSession, on_event: EventSink) -> BudgetHit | None:
        """The budget the task reached, or None to send the next request (``spend`` is
        measured either way)."""
        usage = session.task_usage
        self.at_check = {name: prompt + completion for name, (prompt, completion) in usage.items()}
        self.spend = await priced(usage, self.prices)
        budget = budget_of(self.config)
        if budget.max_cost_usd is not None:
            for name in self.spend.unpriced:
                price = self.prices.get(name)
                if isinstance(price, Unpriced) and name not in self.told:
                    self.told.add(name)
                    on_event(Notice(UNPRICED_NOTICE.format(model=name, reason=price.reason)))
        return budget_hit(self.spend, budget) if budget.limited else None

    def step_done(self, session: TaskSession, model: str, on_event: EventSink) -> None:
        """A step on ``model`` came back: under a budget, say once when it reported no usage
        (its tokens are what they were at the check before it)."""
        if not budget_of(self.config).limited or model in self.told:
            return
        if tokens_on(session, model) <= self.at_check.get(model, 0):
            self.told.add(model)
            on_event(Notice(NO_USAGE_NOTICE.format(model=model)))


def tokens_on(session: TaskSession, model: str) -> int:
    """The task's tokens on ``model`` so far."""
    prompt, completion = session.task_usage.get(model, (0, 0))
    return prompt + completion
