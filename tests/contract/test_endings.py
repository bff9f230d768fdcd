"""Typed endings: only the two completions are "completed", and they need their proof."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from mercury_nb.contract.endings import (
    Aborted,
    BlockedPause,
    Blocker,
    BudgetPause,
    DeclinedPause,
    Ending,
    EndingStatus,
    Failed,
    FilesMissingPause,
    NoChangesCompletion,
    NoToolSupport,
    Paused,
    ProviderAttempt,
    ProviderFailure,
    QuestionPause,
    StepBudgetPause,
    TruncationPause,
    VerificationFailedPause,
    VerifiedCompletion,
    WindowTooSmall,
    WorkNotStartedPause,
    resumable,
    status_of,
)
from mercury_nb.contract.gate.verification import CheckRecord, ReadBack, Verified
from mercury_nb.contract.spend import CostBudgetHit, TokenBudgetHit

PASSED = CheckRecord("pytest", 0, 5)
FAILED = CheckRecord("npm test", 1, 5)

SAMPLES: list[tuple[Ending, EndingStatus]] = [
    (VerifiedCompletion(Verified(PASSED)), "completed"),
    (VerifiedCompletion(ReadBack(("README.md",))), "completed"),
    (NoChangesCompletion("git"), "completed"),
    (NoChangesCompletion("snapshot"), "completed"),
    (StepBudgetPause(continuations=6), "paused"),
    (WorkNotStartedPause(Blocker("write_file", "permission denied")), "paused"),
    (WorkNotStartedPause(None), "paused"),
    (VerificationFailedPause(FAILED, stale=False), "paused"),
    (VerificationFailedPause(PASSED, stale=True), "paused"),
    (VerificationFailedPause(None, stale=False), "paused"),
    (FilesMissingPause(("hello.py",)), "paused"),
    (FilesMissingPause(("calc.py", "test_calc.py")), "paused"),
    (TruncationPause(rounds=6), "paused"),
    (Paused("the same tool call kept repeating", Blocker("run_command", "exit 1")), "paused"),
    (BlockedPause("I can't reach the package index"), "paused"),
    (BudgetPause(CostBudgetHit(0.52, 0.5)), "paused"),
    (BudgetPause(TokenBudgetHit(3600, 3000, ("scripted/x",))), "paused"),
    (DeclinedPause("the notes already say hello"), "paused"),
    (QuestionPause("JSON or SQLite?"), "paused"),
    (ProviderFailure("503", (ProviderAttempt("gpt-4o", "503 unavailable"),)), "failed"),
    (Failed("the workspace disappeared"), "failed"),
    (WindowTooSmall(2048, 1536, 512, 256, 1525, False, compact_tokens=808), "failed"),
    (WindowTooSmall(4096, 3072, 1024, 256, 808, True, task_tokens=9000), "failed"),
    (NoToolSupport("openai/smollm2", "reported"), "failed"),
    (NoToolSupport("openai/smollm2", "observed", 2), "failed"),
    (Aborted("stop"), "aborted"),
    (Aborted("interrupt"), "aborted"),
]


def test_samples_cover_every_ending_variant() -> None:
    assert {type(ending) for ending, _ in SAMPLES} == set(get_args(Ending))


@pytest.mark.parametrize(("ending", "status"), [pytest.param(e, s, id=repr(e)) for e, s in SAMPLES])
def test_status_of(ending: Ending, status: EndingStatus) -> None:
    assert status_of(ending) == status


NOT_RESUMABLE = (VerifiedCompletion, NoChangesCompletion, NoToolSupport, WindowTooSmall)
"""Nothing to resume (a completion), or a resume that fails the same way (no tool support)."""


@pytest.mark.parametrize(("ending", "status"), [pytest.param(e, s, id=repr(e)) for e, s in SAMPLES])
def test_resumable(ending: Ending, status: EndingStatus) -> None:
    assert resumable(ending) is (not isinstance(ending, NOT_RESUMABLE))
    if status == "completed":
        assert not resumable(ending)


def refused(name: str, reason: str) -> ProviderAttempt:
    return ProviderAttempt(name, reason, permanent=True)


@pytest.mark.parametrize(
    ("providers", "expected"),
    [
        pytest.param((refused("a", "HTTP 401: bad key"),), False, id="one-refused-key"),
        pytest.param((refused("a", "HTTP 404: model not found"), refused("b", "HTTP 403")),
                     False, id="every-provider-refused"),
        pytest.param((refused("a", "HTTP 401"), ProviderAttempt("b", "HTTP 429: slow down")),
                     True, id="one-rate-limited-may-pass-later"),
        pytest.param((ProviderAttempt("a", "HTTP 503"), ProviderAttempt("b", "timeout")), True,
                     id="server-errors-and-timeouts"),
        pytest.param((), True, id="no-provider-named"),
    ],
)
def test_a_provider_failure_is_resumable_unless_every_provider_refused_for_good(
    providers: tuple[ProviderAttempt, ...], expected: bool
) -> None:
    assert resumable(ProviderFailure("last", providers)) is expected


@pytest.mark.parametrize(
    "evidence",
    [
        pytest.param(None, id="none"),
        pytest.param(PASSED, id="bare-check-record"),
        pytest.param("pytest", id="command-text"),
    ],
)
def test_verified_completion_refuses_anything_but_evidence(evidence: Any) -> None:
    with pytest.raises(TypeError, match="Verified or ReadBack"):
        VerifiedCompletion(evidence)


def test_files_missing_pause_names_a_file() -> None:
    with pytest.raises(ValueError, match="missing files"):
        FilesMissingPause(())


def test_verified_completion_cannot_hold_a_failed_check() -> None:
    with pytest.raises(ValueError, match="not evidence"):
        VerifiedCompletion(Verified(FAILED))


@pytest.mark.parametrize("how", [pytest.param("model", id="model"), pytest.param("", id="empty")])
def test_no_changes_needs_a_measurement(how: Any) -> None:
    with pytest.raises(ValueError, match="git or snapshot"):
        NoChangesCompletion(how)


@pytest.mark.parametrize(
    ("check", "stale", "message"),
    [
        pytest.param(PASSED, False, "passing fresh check", id="fresh-pass"),
        pytest.param(None, True, "stale check needs the check", id="stale-without-check"),
    ],
)
def test_verification_failed_pause_is_consistent(
    check: CheckRecord | None, stale: bool, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        VerificationFailedPause(check, stale)
