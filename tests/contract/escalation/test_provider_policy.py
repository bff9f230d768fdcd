"""Table tests of the provider policy: classification, backoff, fallback, ledger, redaction."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.escalation.provider_policy import (
    CONTINUE_FROM_PARTIAL,
    DOOM_LOOP_KIND,
    AllProvidersFailed,
    FailedAttempt,
    ProviderDecision,
    ProviderState,
    RetrySame,
    SwitchProvider,
    backoff_delay,
    classify_failure,
    record_success,
    step_provider,
    use_provider,
)
from mercury_nb.contract.redaction import mask_once, redact

API_KEY = "sk-live-0123456789abcdefXYZ"


def make_config(**changes: object) -> MercuryConfig:
    return MercuryConfig(model="a", fallbacks=("b", "c")).with_changes(**changes)


def http(status: int, message: str = "boom", retry_after: float | None = None) -> FailedAttempt:
    return FailedAttempt(message=message, status=status, retry_after_s=retry_after)


def run(
    failures: list[FailedAttempt],
    config: MercuryConfig | None = None,
    chain: tuple[str, ...] = ("a", "b", "c"),
    start: int = 0,
    jitter: float = 0.0,
) -> tuple[ProviderState, list[ProviderDecision]]:
    state = ProviderState.initial(chain, start)
    decisions: list[ProviderDecision] = []
    for failure in failures:
        state, decision = step_provider(state, failure, config or make_config(), jitter)
        decisions.append(decision)
    return state, decisions


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        pytest.param(http(429), "transient", id="429"),
        pytest.param(http(500), "transient", id="500"),
        pytest.param(http(502), "transient", id="502"),
        pytest.param(http(503), "transient", id="503"),
        pytest.param(http(504), "transient", id="504"),
        pytest.param(http(408), "transient", id="408-request-timeout"),
        pytest.param(FailedAttempt("read timed out", kind="timeout"), "transient", id="timeout"),
        pytest.param(FailedAttempt("refused", kind="connection"), "transient", id="connection"),
        pytest.param(
            FailedAttempt("no finish", kind="interrupted"), "transient", id="interrupted"
        ),
        pytest.param(FailedAttempt("weird"), "transient", id="unknown-no-status"),
        pytest.param(http(400), "non-retryable", id="400"),
        pytest.param(http(401), "non-retryable", id="401"),
        pytest.param(http(403), "non-retryable", id="403"),
        pytest.param(http(404), "non-retryable", id="404"),
        pytest.param(http(422), "non-retryable", id="422"),
        pytest.param(http(413), "non-retryable", id="413-other-4xx"),
        pytest.param(FailedAttempt("bad key", kind="auth"), "non-retryable", id="auth-kind"),
        pytest.param(
            FailedAttempt("too long", kind="context_window"), "non-retryable", id="context-window"
        ),
        pytest.param(FailedAttempt("bad chunk", kind="malformed"), "transient", id="malformed"),
        pytest.param(
            FailedAttempt("overloaded", kind="server_error"), "transient", id="server-error-kind"
        ),
        pytest.param(
            FailedAttempt("looped", kind=DOOM_LOOP_KIND), "non-retryable", id="doom-loop"
        ),
    ],
)
def test_classify(failure: FailedAttempt, expected: str) -> None:
    assert classify_failure(failure) == expected


@pytest.mark.parametrize(
    ("base", "cap", "expected"),
    [
        pytest.param(5.0, 300.0, [5, 10, 20, 40, 80, 160, 300, 300], id="plain-5s-to-5min"),
        pytest.param(2.0, 60.0, [2, 4, 8, 16, 32, 60, 60, 60], id="continuation-2s-to-60s"),
    ],
)
def test_backoff_sequence_and_cap(base: float, cap: float, expected: list[float]) -> None:
    assert [backoff_delay(n, base, cap, 0.0) for n in range(1, 9)] == expected


@pytest.mark.parametrize(
    ("jitter", "expected"),
    [
        pytest.param(0.0, 20.0, id="no-jitter"),
        pytest.param(0.5, 17.5, id="half"),
        pytest.param(0.999, 15.005, id="almost-one"),
    ],
)
def test_jitter_only_shortens(jitter: float, expected: float) -> None:
    assert backoff_delay(3, 5.0, 300.0, jitter) == pytest.approx(expected)


@pytest.mark.parametrize("jitter", [pytest.param(-0.1, id="negative"), pytest.param(1.0, id="one")])
def test_jitter_out_of_range(jitter: float) -> None:
    with pytest.raises(ValueError, match="jitter"):
        step_provider(ProviderState.initial(["a"]), http(503), make_config(), jitter)


def test_transient_retried_with_backoff_then_switch() -> None:
    state, decisions = run([http(503)] * 4)
    assert decisions[:3] == [RetrySame(5.0, 1), RetrySame(10.0, 2), RetrySame(20.0, 3)]
    switch = decisions[3]
    assert isinstance(switch, SwitchProvider)
    assert (switch.next_index, switch.next_provider) == (1, "b")
    assert switch.notice == "⚠ a: HTTP 503: boom — switching to b and continuing."
    assert (state.current, state.retries) == (1, 0)


@pytest.mark.parametrize(
    ("retry_after", "expected_delay"),
    [
        pytest.param(30.0, 30.0, id="retry-after-longer-than-backoff"),
        pytest.param(1.0, 5.0, id="backoff-longer-than-retry-after"),
        pytest.param(300.0, 300.0, id="retry-after-at-cap"),
    ],
)
def test_retry_after_honoured(retry_after: float, expected_delay: float) -> None:
    _, (decision,) = run([http(429, "slow down", retry_after)])
    assert decision == RetrySame(expected_delay, 1)


def test_retry_after_beyond_cap_moves_on() -> None:
    _, (decision,) = run([http(429, "come back in an hour", 3600.0)])
    assert isinstance(decision, SwitchProvider) and decision.next_provider == "b"


def test_retry_after_is_a_floor_even_with_jitter() -> None:
    _, (decision,) = run([http(429, "slow", 7.0)], jitter=0.9)
    assert isinstance(decision, RetrySame) and decision.delay_s >= 7.0


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_non_retryable_goes_straight_to_next(status: int) -> None:
    _, (decision,) = run([http(status)])
    assert isinstance(decision, SwitchProvider) and decision.next_provider == "b"


def test_401_never_retried_on_that_provider_even_after_success() -> None:
    state, _ = run([http(401, "invalid api key")])
    state = record_success(state)  # b served a step
    assert state.current == 1
    # b fails for good: the chain goes to c, and then past a (refused credentials) to nothing.
    state, to_c = step_provider(state, http(404), make_config(), 0.0)
    assert isinstance(to_c, SwitchProvider) and to_c.next_provider == "c"
    state, end = step_provider(state, http(400), make_config(), 0.0)
    assert isinstance(end, AllProvidersFailed)
    # After a later success, the guard asking for a (or b, refused too) is sent to c.
    state = record_success(state)
    assert [use_provider(state, i).current for i in range(3)] == [2, 2, 2]


def test_transiently_failed_provider_is_eligible_after_a_success() -> None:
    config = make_config(retry_attempts=0)
    state, _ = run([http(503)], config, chain=("a", "b"))
    state = record_success(state)
    state, decision = step_provider(state, http(503), config, 0.0)
    assert isinstance(decision, SwitchProvider) and decision.next_provider == "a"


@pytest.mark.parametrize(
    ("start", "expected_order"),
    [
        pytest.param(0, ["b", "c"], id="from-a"),
        pytest.param(1, ["c", "a"], id="from-b-wraps"),
        pytest.param(2, ["a", "b"], id="from-c-wraps"),
    ],
)
def test_chain_walks_from_current_and_wraps(start: int, expected_order: list[str]) -> None:
    _, decisions = run([http(401)] * 3, start=start)
    switches = [d.next_provider for d in decisions if isinstance(d, SwitchProvider)]
    assert switches == expected_order
    assert isinstance(decisions[-1], AllProvidersFailed)


def test_retry_attempts_zero_switches_immediately() -> None:
    _, (decision,) = run([http(503)], make_config(retry_attempts=0))
    assert isinstance(decision, SwitchProvider)


def test_ledger_keeps_first_error_per_provider() -> None:
    config = make_config(retry_attempts=1)
    state = ProviderState.initial(("a", "b", "c"))
    for failure in [http(503, "a-first"), http(500, "a-second"), http(401, "b-first")]:
        state, _ = step_provider(state, failure, config, 0.0)
    assert dict(state.ledger) == {"a": "HTTP 503: a-first", "b": "HTTP 401: b-first"}
    assert state.last_error == "HTTP 401: b-first"
    with pytest.raises(TypeError):
        state.ledger["a"] = "changed"  # type: ignore[index]


def test_all_failed_message_format() -> None:
    config = make_config(retry_attempts=0)
    failures = [
        http(503, "Service Unavailable"),
        FailedAttempt("read timed out", kind="timeout"),
        http(401, "Incorrect API key provided"),
    ]
    _, decisions = run(failures, config)
    end = decisions[-1]
    assert isinstance(end, AllProvidersFailed)
    assert end.message == (
        "All LLM providers failed. Last error: HTTP 401: Incorrect API key provided\n"
        "Per-provider:\n"
        "- a: HTTP 503: Service Unavailable\n"
        "- b: timeout: read timed out\n"
        "- c: HTTP 401: Incorrect API key provided"
    )


def test_all_failed_lists_at_most_eight_providers() -> None:
    chain = tuple(f"p{i}" for i in range(10))
    config = MercuryConfig(model=chain[0], fallbacks=chain[1:])
    _, decisions = run([http(401)] * 10, config, chain=chain)
    end = decisions[-1]
    assert isinstance(end, AllProvidersFailed)
    lines = end.message.split("\n")
    assert lines[1] == "Per-provider:"
    assert lines[2:] == [f"- p{i}: HTTP 401: boom" for i in range(8)]


def test_reasons_are_one_line_and_at_most_140_chars() -> None:
    state, (decision,) = run([http(500, "x" * 500 + "\n\ntrace")], make_config(retry_attempts=0))
    entry = state.ledger["a"]
    assert len(entry) == 140 and entry.endswith("…") and "\n" not in entry
    assert isinstance(decision, SwitchProvider) and entry in decision.notice


@pytest.mark.parametrize(
    ("failures", "expected_delays"),
    [
        pytest.param(
            [FailedAttempt("dropped", kind="interrupted", streamed_output=True)] * 3,
            [2.0, 4.0, 8.0],
            id="after-output-continuation-backoff",
        ),
        pytest.param(
            [FailedAttempt("dropped", kind="interrupted")] * 3,
            [5.0, 10.0, 20.0],
            id="before-output-plain-backoff",
        ),
    ],
)
def test_partial_turn_is_kept(
    failures: list[FailedAttempt], expected_delays: list[float]
) -> None:
    _, decisions = run(failures)
    resume = failures[0].streamed_output
    assert [d.delay_s for d in decisions if isinstance(d, RetrySame)] == expected_delays
    assert all(d.resume_partial is resume for d in decisions if isinstance(d, RetrySame))
    expected = CONTINUE_FROM_PARTIAL if resume else None
    assert all(d.continuation == expected for d in decisions if isinstance(d, RetrySame))


def test_switch_after_output_continues_from_partial() -> None:
    failure = FailedAttempt("bad request", status=400, streamed_output=True)
    _, (decision,) = run([failure])
    assert isinstance(decision, SwitchProvider)
    assert decision.resume_partial and decision.continuation == CONTINUE_FROM_PARTIAL
    assert "do NOT redo" in CONTINUE_FROM_PARTIAL and len(CONTINUE_FROM_PARTIAL) < 400


def test_doom_loop_moves_to_next_provider_naming_the_loop() -> None:
    loop = FailedAttempt("read_file(a.py) called 4 times in a row", kind=DOOM_LOOP_KIND)
    _, (decision,) = run([loop])
    assert isinstance(decision, SwitchProvider)
    assert "read_file(a.py) called 4 times" in decision.notice


# --- redaction --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        pytest.param("key abc123secret here", ["abc123secret"], "key *** here", id="given-secret"),
        pytest.param(
            "Incorrect API key provided: sk-proj-AbC123xyz789",
            [],
            "Incorrect API key provided: sk-***",
            id="sk-token",
        ),
        pytest.param(
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc",
            [],
            "Authorization: Bearer ***",
            id="bearer",
        ),
        pytest.param(
            "GET /v1?api_key=AIzaSyA1234567890abcdefghijk&x=1",
            [],
            "GET /v1?api_key=***&x=1",
            id="query-param",
        ),
        pytest.param("groq gsk_0123456789abcdefghij failed", [], "groq *** failed", id="gsk"),
        pytest.param(
            "task-runner sk-short risk",
            [],
            "task-runner sk-short risk",
            id="words-with-sk-untouched",
        ),
        pytest.param("nothing secret", ["", "  "], "nothing secret", id="blank-secrets-ignored"),
        pytest.param("ab-abcdef-ab", ["ab", "ab-abcdef-ab"], "***", id="longest-first"),
    ],
)
def test_redact(text: str, secrets: list[str], expected: str) -> None:
    assert redact(text, secrets) == expected


def test_a_masked_message_is_shown_as_it_came_never_masked_again() -> None:
    # masked once where it entered the task (mask_once): the policy adds only its own words,
    # so a token-shaped text it would have masked again stays as it came
    came = mask_once("Invalid key k-9f8e7d6c5b4a", ["k-9f8e7d6c5b4a"]) + " sk-0123456789ab"
    config = make_config(retry_attempts=0)
    state, decisions = run([http(401, came), http(401, came), http(401, came)], config)
    texts = [d.notice for d in decisions if isinstance(d, SwitchProvider)]
    texts += [d.message for d in decisions if isinstance(d, AllProvidersFailed)]
    texts += list(state.ledger.values())
    assert len(texts) == 6
    for text in texts:
        assert "Invalid key *** sk-0123456789ab" in text
