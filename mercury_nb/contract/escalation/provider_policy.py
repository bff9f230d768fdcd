"""Provider retry, backoff and fallback as pure decisions, with the named per-provider ledger.

A failure is *transient* (429, 408, 5xx, timeouts, connection errors, interrupted streams,
anything unrecognised) or *non-retryable* (400, 401, 403, 404, 422 and the other 4xx, and a
doom loop). Transient failures are retried on the same provider up to
``config.retry_attempts`` times with exponential backoff and jitter; non-retryable ones go
straight to the next provider. A Retry-After longer than ``config.retry_max_s`` is not
waited for: the chain moves on instead.

The chain is walked from the current provider, wrapping around, skipping providers that
failed since the last success (:func:`record_success` makes them eligible again) and, for
the rest of the task, providers that refused the credentials or the model (401, 403, 404).

A stream cut before any tool call of the turn completed is retried cleanly: the same
request again (the agent discards the partial text, which is never part of an answer).
A failure after a tool call of the turn completed (``streamed_output``) keeps the turn's
completed calls: the decision says ``resume_partial`` and carries the continuation
message, and retries of such a failure use the shorter continuation backoff. Even then the
cut reply's text is dropped and the model writes its reply again in full, so a delivered
answer is never a fragment and never misses its start.

A complete reply with neither text nor a tool call (:data:`EMPTY_REPLY_KIND`) is a failed
step like an interrupted stream: retried, then the next provider; when the chain is used up
on it, the task pauses naming it (:data:`EMPTY_REPLIES_PAUSE`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Literal

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.redaction import Masked

FailureClass = Literal["transient", "non-retryable"]

DOOM_LOOP_KIND = "doom-loop"
"""``FailedAttempt.kind`` for an attempt aborted by the doom-loop detector."""

EMPTY_REPLY_KIND = "empty-reply"
"""``ProviderError.kind`` (and so ``FailedAttempt.kind``) for a complete reply with no text
(or only whitespace) and no tool call: a transient failure of the provider, never an answer
and never narration."""
EMPTY_REPLY_MESSAGE = "the model answered with nothing (no text and no tool call)"
EMPTY_REPLIES_PAUSE = (
    "every model I could try answered with nothing — no text and no tool call "
    "(last: {provider})"
)
"""The reason of the honest pause when the chain was used up on empty replies."""

NON_RETRYABLE_STATUSES = frozenset({400, 401, 403, 404, 422})
PERMANENT_STATUSES = frozenset({401, 403, 404})
"""Statuses after which a provider is not tried again during the task."""
PERMANENT_KINDS = frozenset({"auth", "permission", "not_found"})
"""Kinds that refuse the credentials or the model, whatever the status says."""
NON_RETRYABLE_KINDS = frozenset(
    {
        DOOM_LOOP_KIND,
        "auth",
        "permission",
        "bad_request",
        "not_found",
        "client_error",
        "context_window",
        "content_policy",
    }
)
"""Kinds (as ``mercury_nb.transport.provider_errors`` names them) never retried as they are."""

CONTINUATION_RETRY_BASE_S = 2.0
CONTINUATION_RETRY_MAX_S = 60.0
JITTER_SPREAD = 0.25
"""Jitter shortens a backoff delay by up to this fraction, never lengthens it."""
LEDGER_LINES = 8

SWITCH_NOTICE = "⚠ {provider}: {reason} — switching to {next} and continuing."
ALL_FAILED_HEADER = "All LLM providers failed. Last error: {reason}"
CONTINUE_FROM_PARTIAL = (
    "[SYSTEM: CONTINUE FROM PARTIAL] The provider failed in the middle of this turn. Every "
    "tool call above completed and its result is shown — do NOT redo them. Carry on from "
    "there; your cut reply was discarded, so write any reply in full."
)


@dataclass(frozen=True)
class FailedAttempt:
    """One failed attempt on the current provider."""

    message: Masked
    """Masked where it entered the task: the policy shows it as it is."""
    status: int | None = None
    kind: str = "error"
    """e.g. ``timeout``, ``connection``, ``interrupted``, ``rate_limit``, ``doom-loop``."""
    streamed_output: bool = False
    """Text was streamed or a tool completed before the failure."""
    retry_after_s: float | None = None


@dataclass(frozen=True)
class ProviderState:
    """Where in the chain the task is, retries on the current provider, and the ledger."""

    chain: tuple[str, ...]
    current: int = 0
    retries: int = 0
    failed: frozenset[int] = frozenset()
    dead: frozenset[int] = frozenset()
    first_errors: tuple[tuple[str, Masked], ...] = ()
    last_error: Masked | None = None

    @classmethod
    def initial(cls, chain: Sequence[str], start: int = 0) -> ProviderState:
        if not chain:
            raise ValueError("the provider chain is empty")
        return cls(chain=tuple(chain), current=start % len(chain))

    @property
    def provider(self) -> str:
        return self.chain[self.current]

    @property
    def ledger(self) -> Mapping[str, Masked]:
        """Provider -> its first error (redacted, ``provider_error_chars`` at most), chain order."""
        errors = dict(self.first_errors)
        return MappingProxyType({name: errors[name] for name in self.chain if name in errors})


@dataclass(frozen=True)
class RetrySame:
    """Wait ``delay_s`` then retry the same provider (retry number ``attempt``)."""

    delay_s: float
    attempt: int
    resume_partial: bool = False
    continuation: str | None = None


@dataclass(frozen=True)
class SwitchProvider:
    """Show ``notice`` and continue on provider ``next_index`` of the chain."""

    next_index: int
    next_provider: str
    notice: str
    resume_partial: bool = False
    continuation: str | None = None


@dataclass(frozen=True)
class AllProvidersFailed:
    """No provider is left; ``message`` is the ledger message. Any partial turn is kept."""

    message: Masked
    resume_partial: bool = False


ProviderDecision = RetrySame | SwitchProvider | AllProvidersFailed


def classify_failure(failure: FailedAttempt) -> FailureClass:
    """Transient failures may be retried on the same provider; the others may not."""
    if failure.kind.lower() in NON_RETRYABLE_KINDS:
        return "non-retryable"
    status = failure.status
    if status is None:
        return "transient"
    if status in (408, 429) or status >= 500:
        return "transient"
    if status in NON_RETRYABLE_STATUSES or 400 <= status < 500:
        return "non-retryable"
    return "transient"


def is_permanent(failure: FailedAttempt) -> bool:
    """The provider refused the credentials or the model (401, 403, 404, or an error of that
    kind): it is not tried again during the task, and a continue with it cannot succeed."""
    return failure.status in PERMANENT_STATUSES or failure.kind.lower() in PERMANENT_KINDS


def refused(state: ProviderState) -> frozenset[str]:
    """The providers of the chain that refused for good (:func:`is_permanent`)."""
    return frozenset(state.chain[index] for index in state.dead)


def backoff_delay(retry: int, base_s: float, max_s: float, jitter: float) -> float:
    """``min(base * 2^(retry-1), max)``, shortened by up to :data:`JITTER_SPREAD` by jitter."""
    _check_jitter(jitter)
    raw = min(base_s * 2.0 ** (retry - 1), max_s)
    return raw * (1.0 - JITTER_SPREAD * jitter)


def failure_reason(failure: FailedAttempt, limit: int) -> Masked:
    """One line of at most ``limit`` chars: ``HTTP 503: message`` or ``timeout: …`` (the
    message came masked: only the status and kind, the policy's own words, are added)."""
    message = " ".join(failure.message.split())
    if failure.status is not None:
        text = f"HTTP {failure.status}: {message}" if message else f"HTTP {failure.status}"
    elif failure.kind and failure.kind != "error":
        text = f"{failure.kind}: {message}" if message else failure.kind
    else:
        text = message or "unknown error"
    return Masked(text if len(text) <= limit else text[: limit - 1] + "…")


def step_provider(
    state: ProviderState,
    failure: FailedAttempt,
    config: MercuryConfig,
    jitter: float,
    *,
    continuation_base_s: float = CONTINUATION_RETRY_BASE_S,
    continuation_max_s: float = CONTINUATION_RETRY_MAX_S,
) -> tuple[ProviderState, ProviderDecision]:
    """Decide what follows a failed attempt on ``state.provider``; ``jitter`` is in [0, 1)."""
    _check_jitter(jitter)
    reason = failure_reason(failure, config.provider_error_chars)
    whole = failure_reason(failure, config.provider_message_chars)
    state = _record(state, reason, whole)
    resume = failure.streamed_output
    continuation = CONTINUE_FROM_PARTIAL if resume else None
    retry_after = failure.retry_after_s
    if (
        classify_failure(failure) == "transient"
        and state.retries < config.retry_attempts
        and (retry_after is None or retry_after <= config.retry_max_s)
    ):
        attempt = state.retries + 1
        base, cap = (
            (continuation_base_s, continuation_max_s)
            if resume
            else (config.retry_base_s, config.retry_max_s)
        )
        delay = max(retry_after or 0.0, backoff_delay(attempt, base, cap, jitter))
        return replace(state, retries=attempt), RetrySame(delay, attempt, resume, continuation)
    state = replace(
        state,
        retries=0,
        failed=state.failed | {state.current},
        dead=state.dead | {state.current} if is_permanent(failure) else state.dead,
    )
    following = _next_available(state)
    if following is None:
        return state, AllProvidersFailed(all_failed_message(state, whole), resume)
    notice = SWITCH_NOTICE.format(provider=state.provider, reason=reason,
                                  next=state.chain[following])
    switched = replace(state, current=following)
    return switched, SwitchProvider(following, state.chain[following], notice, resume, continuation)


def record_success(state: ProviderState) -> ProviderState:
    """A request succeeded: reset retries; providers that failed before become eligible
    again, except the permanently refused ones. The ledger is kept."""
    return replace(state, retries=0, failed=frozenset())


def use_provider(state: ProviderState, index: int) -> ProviderState:
    """Move to provider ``index`` (guard rotation), or the next usable one after it."""
    target = index % len(state.chain)
    if target in state.dead:
        following = _next_available(replace(state, current=target))
        target = following if following is not None else target
    return replace(state, current=target, retries=0)


def all_failed_message(state: ProviderState, last_reason: Masked) -> Masked:
    """``All LLM providers failed. Last error: …``, ``Per-provider:``, ``- name: reason`` lines."""
    lines = [ALL_FAILED_HEADER.format(reason=last_reason), "Per-provider:"]
    lines.extend(f"- {name}: {error}" for name, error in list(state.ledger.items())[:LEDGER_LINES])
    return Masked("\n".join(lines))  # masked reasons, the chain's names and our words


def _record(state: ProviderState, reason: Masked, whole: Masked) -> ProviderState:
    """``reason`` (short) goes into the ledger once per provider; ``whole`` (up to
    ``provider_message_chars``) becomes the last error the banner shows."""
    if any(name == state.provider for name, _ in state.first_errors):
        return replace(state, last_error=whole)
    return replace(
        state, first_errors=(*state.first_errors, (state.provider, reason)), last_error=whole
    )


def _next_available(state: ProviderState) -> int | None:
    unusable = state.failed | state.dead
    size = len(state.chain)
    for offset in range(1, size + 1):
        index = (state.current + offset) % size
        if index not in unusable:
            return index
    return None


def _check_jitter(jitter: float) -> None:
    if not 0.0 <= jitter < 1.0:
        raise ValueError(f"jitter must be in [0, 1), got {jitter!r}")
