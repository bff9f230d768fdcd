"""The last provider error is kept whole (up to provider_message_chars) for the banner, while
the per-provider ledger and the switch notice keep their short form."""

from __future__ import annotations

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.escalation.provider_policy import (
    AllProvidersFailed,
    FailedAttempt,
    ProviderState,
    step_provider,
)

HINT = ("LLM Provider NOT provided. Pass in the LLM provider you are trying to call. You passed "
        "model=foo Pass model as E.g. For 'Huggingface' inference endpoints pass in "
        "`completion(model='huggingface/starcoder',..)` Learn more: "
        "https://docs.litellm.ai/docs/providers")


def test_last_error_whole_ledger_short() -> None:
    config = MercuryConfig(retry_attempts=0, provider_error_chars=140)
    state = ProviderState.initial(["foo"])
    state, decision = step_provider(state, FailedAttempt(HINT, status=400, kind="bad_request"),
                                    config, 0.0)
    assert isinstance(decision, AllProvidersFailed)
    assert state.last_error == f"HTTP 400: {HINT}"
    first_line = decision.message.splitlines()[0]
    assert first_line == f"All LLM providers failed. Last error: HTTP 400: {HINT}"
    assert len(state.ledger["foo"]) == 140 and state.ledger["foo"].endswith("…")


def test_last_error_is_capped_by_provider_message_chars() -> None:
    config = MercuryConfig(retry_attempts=0, provider_message_chars=100)
    state, _ = step_provider(ProviderState.initial(["a"]), FailedAttempt("x" * 500, status=500),
                             config, 0.0)
    assert state.last_error is not None and len(state.last_error) == 100
