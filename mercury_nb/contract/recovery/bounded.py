"""The one bounded "count, then pause" policy: another attempt while the bound allows, else give up.

Every recovery that retries counts its attempts and pauses at a bound: the step budget's
automatic continuations, the truncation rounds, a sub-agent's automatic resumes, the
narration guard's rounds and the context-overflow retries. Each asks :func:`bounded` with the
attempts it has used and its bound, and carries out the answer its own way (its own words,
its own pause).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Retry:
    """Make attempt number ``attempt`` (from 1) of at most ``of``."""

    attempt: int
    of: int


@dataclass(frozen=True)
class GiveUp:
    """The ``of`` attempts allowed are used up (``attempts`` were made): pause."""

    attempts: int
    of: int


BoundedDecision = Retry | GiveUp


def bounded(count: int, bound: int) -> BoundedDecision:
    """After ``count`` attempts, with at most ``bound`` allowed: the next one, or give up.

    A negative count reads as none made; a bound below 1 allows none."""
    used = max(0, count)
    allowed = max(0, bound)
    if used >= allowed:
        return GiveUp(attempts=used, of=allowed)
    return Retry(attempt=used + 1, of=allowed)
