"""The user's own Deny: what a task remembers of it, and the ending it leaves, as tables."""

from __future__ import annotations

import pytest

from mercury_nb.agent.finish import blocker_of
from mercury_nb.contract.banners import VERIFICATION_FAILED, banner_text
from mercury_nb.contract.endings import (
    Aborted,
    BlockedPause,
    Blocker,
    BudgetPause,
    DeclinedPause,
    Ending,
    Failed,
    FilesMissingPause,
    NoChangesCompletion,
    NoToolSupport,
    Paused,
    ProviderFailure,
    QuestionPause,
    StepBudgetPause,
    TruncationPause,
    VerificationFailedPause,
    VerifiedCompletion,
    WindowTooSmall,
    WorkNotStartedPause,
)
from mercury_nb.contract.gate.verification import CheckRecord, ReadBack, Verified
from mercury_nb.contract.permissions import pause_reason
from mercury_nb.contract.spend import TokenBudgetHit
from mercury_nb.contract.text_cut import clip
from mercury_nb.contract.user_denials import (
    SAID_CHARS,
    UserDenial,
    after_user_denial,
    denial_after,
    denied_reason,
)

PIP = UserDenial('run "pip install requests"', "pip install requests")
PIP_PAUSE = Paused('you denied permission to run "pip install requests" — allow it with '
               '--allow "pip install requests" or --permissions auto')
FAILED_CHECK = CheckRecord("pytest -q", 1, 3)
TIMED_OUT = CheckRecord("pytest -q", None, 3, timed_out=True)
WINDOW = WindowTooSmall(window=2048, budget=100, reply_tokens=512, system_tokens=900,
                        tools_tokens=700, compact=False)
UNCHANGED: list[Ending] = [
    VerifiedCompletion(Verified(CheckRecord("pytest -q", 0, 3))),
    VerifiedCompletion(ReadBack(("notes.md",))),
    NoChangesCompletion("git"),
    Aborted(),
    StepBudgetPause(2),
    TruncationPause(3),
    Paused("memory pressure"),
    Paused(pause_reason('run "curl x"', "curl x")),
    BudgetPause(TokenBudgetHit(1000, 900)),
    QuestionPause("Which version of requests?"),
    ProviderFailure("HTTP 500"),
    Failed("the model chain could not be resolved"),
    WINDOW,
    NoToolSupport("m", "reported"),
]
DENIED_BLOCKER = Blocker("run_command", "denied: the user denied it")
REPLACED: list[tuple[Ending, Ending]] = [
    (WorkNotStartedPause(DENIED_BLOCKER), Paused(PIP_PAUSE.reason, DENIED_BLOCKER)),
    (WorkNotStartedPause(None), PIP_PAUSE),
    (VerificationFailedPause(FAILED_CHECK, stale=False),
     VerificationFailedPause(FAILED_CHECK, stale=False, denied=PIP_PAUSE.reason)),
    (VerificationFailedPause(TIMED_OUT, stale=False),
     VerificationFailedPause(TIMED_OUT, stale=False, denied=PIP_PAUSE.reason)),
    (VerificationFailedPause(FAILED_CHECK, stale=True), PIP_PAUSE),
    (VerificationFailedPause(None, stale=False, requested="python hello.py"), PIP_PAUSE),
    (FilesMissingPause(("made.txt",)), PIP_PAUSE),
    (BlockedPause("I cannot install requests without permission"),
     Paused(f"{PIP_PAUSE.reason} (the model said: I cannot install requests without "
            "permission)")),
    (BlockedPause("  "), PIP_PAUSE),
    (DeclinedPause("nothing needs changing"),
     Paused(f"{PIP_PAUSE.reason} (the model said: nothing needs changing)")),
    (BlockedPause("x" * 400),
     Paused(f"{PIP_PAUSE.reason} (the model said: {clip('x' * 400, SAID_CHARS)})")),
]


@pytest.mark.parametrize("ending", [*UNCHANGED, *(e for e, _ in REPLACED)], ids=repr)
def test_nothing_denied_keeps_every_ending(ending: Ending) -> None:
    assert after_user_denial(ending, None) is ending


@pytest.mark.parametrize("ending", UNCHANGED, ids=repr)
def test_a_completion_a_stop_or_an_unrelated_cause_stays_as_it_is(ending: Ending) -> None:
    assert after_user_denial(ending, PIP) is ending


@pytest.mark.parametrize(("ending", "paused"), REPLACED, ids=repr)
def test_a_pause_the_denial_may_have_caused_names_it_and_how_to_allow_it(
        ending: Ending, paused: Ending) -> None:
    """It keeps what else the ending knew: the blocker, the model's words; a check that ran
    after the last change and failed stays the cause, the denial named beside it."""
    assert after_user_denial(ending, PIP) == paused


def test_a_failed_check_stays_the_blocker_and_the_banner_names_the_denial_too() -> None:
    ending = after_user_denial(VerificationFailedPause(FAILED_CHECK, stale=False), PIP)
    assert blocker_of(ending, 120) == "the last check did not pass: pytest -q ✗ (exit 1)"
    lines = banner_text(ending, []).splitlines()
    assert lines[:2] == [VERIFICATION_FAILED, "Last check: pytest -q ✗ (exit 1)"]
    assert lines[2] == f"Also: {PIP_PAUSE.reason}."
    assert after_user_denial(ending, PIP) == ending  # noted once, however often it is applied


@pytest.mark.parametrize(("denial", "reason"), [
    (PIP, PIP_PAUSE.reason),
    (UserDenial('run "pip install x; curl y"'),
     'you denied permission to run "pip install x; curl y" — allow it with --allow for '
     "each of its parts, or --permissions auto"),
    (UserDenial("edit_file notes.md"),
     "you denied permission to edit_file notes.md — allow it with --permissions auto"),
])
def test_the_reason_says_it_as_a_pause_for_permission_does(denial: UserDenial,
                                                           reason: str) -> None:
    assert denied_reason(denial) == reason
    assert reason.split(" — ")[1] == pause_reason(denial.what, denial.rule).split(" — ")[1]


OTHER = UserDenial('run "rm -rf build"', None)


@pytest.mark.parametrize(("noted", "what", "answer", "by_user", "after"), [
    pytest.param(None, PIP.what, "deny", True, PIP, id="the-users-deny-is-noted"),
    pytest.param(None, PIP.what, "deny", False, None, id="a-timeout-is-not-the-users"),
    pytest.param(OTHER, PIP.what, "deny", True, PIP, id="the-latest-deny-is-kept"),
    pytest.param(OTHER, PIP.what, "deny", False, OTHER, id="a-failed-ask-keeps-the-note"),
    pytest.param(PIP, PIP.what, "allow-once", False, None, id="allowed-later-is-forgotten"),
    pytest.param(PIP, PIP.what, "always-allow", False, None, id="always-allowed-later"),
    pytest.param(PIP, OTHER.what, "allow-once", False, PIP, id="another-allowed-keeps-it"),
    pytest.param(None, PIP.what, "allow-once", False, None, id="nothing-noted"),
])
def test_what_a_task_remembers_of_a_deny(noted: UserDenial | None, what: str, answer: str,
                                         by_user: bool, after: UserDenial | None) -> None:
    rule = PIP.rule if what == PIP.what else None
    assert denial_after(noted, what, rule, answer, by_user) == after  # type: ignore[arg-type]
