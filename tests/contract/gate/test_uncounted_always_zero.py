"""Flags that make a check exit 0 whatever it finds: the run counts as no evidence."""

from __future__ import annotations

import pytest

from mercury_nb.contract.gate.check_commands import is_verification_command
from mercury_nb.contract.gate.completion_gate import uncounted_note
from mercury_nb.contract.gate.uncounted_checks import uncounted_check
from mercury_nb.contract.gate.verification import CheckRecord, NoCheck, judge_evidence


@pytest.mark.parametrize(
    ("command", "flag", "check"),
    [
        ("ruff check --exit-zero .", "--exit-zero", "ruff check ."),
        ("pylint --exit-zero src", "--exit-zero", "pylint src"),
        ("flake8 --exit-zero", "--exit-zero", "flake8"),
        ("npm test --if-present", "--if-present", "npm test"),
        ("npm run test --if-present", "--if-present", "npm run test"),
    ],
)
def test_always_zero_flags_make_a_check_uncounted(command: str, flag: str, check: str) -> None:
    assert not is_verification_command(command)
    found = uncounted_check(command)
    assert found is not None
    assert (found.why, found.detail) == ("always-zero", flag)
    assert found.explanation() == f"`{flag}` makes it exit 0 whatever it finds"
    assert f"Run `{check}` on its own" in uncounted_note(found)
    verdict = judge_evidence([CheckRecord(command, 0, 2)], last_mutation_seq=1)
    assert verdict == NoCheck(found)


@pytest.mark.parametrize("command", ["ruff check .", "npm test", "pylint src", "flake8"])
def test_without_the_flag_the_check_counts(command: str) -> None:
    assert is_verification_command(command)
    assert uncounted_check(command) is None
