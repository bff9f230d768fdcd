"""The CLI's terminal approver: its prompt, the answers it reads, and no terminal, no asking."""

from __future__ import annotations

import io

import pytest

from mercury_nb.contract.permissions import ApprovalRequest
from mercury_nb.ui.terminal_approver import (
    TerminalApprover,
    parse_choice,
    prompt_text,
    terminal_approver,
)

PIP = ApprovalRequest("run_command", 'run "pip install requests"', "pip install requests",
                      suggested_rule="pip install requests")


@pytest.mark.parametrize(("typed", "has_rule", "answer"), [
    ("o", True, "allow-once"), ("yes", False, "allow-once"), ("a", True, "always-allow"),
    ("a", False, None), ("d", True, "deny"), ("n", False, "deny"), ("maybe", True, None),
])
def test_parse_choice(typed: str, has_rule: bool, answer: str | None) -> None:
    assert parse_choice(typed, has_rule=has_rule) == answer


def test_the_prompt_shows_the_exact_command_and_the_rule() -> None:
    text = prompt_text(PIP)
    assert 'mercury asks permission to run "pip install requests"' in text
    assert "[a] Always allow `pip install requests`" in text


@pytest.mark.parametrize(("lines", "answer"), [
    (["a\n"], "always-allow"), (["what\n", "o\n"], "allow-once"), ([], "deny")])
async def test_it_reads_until_a_choice_and_denies_at_end_of_input(lines: list[str],
                                                                  answer: str) -> None:
    typed = iter(lines)
    shown: list[str] = []
    approver = TerminalApprover(lambda: next(typed, ""), shown.append)
    assert await approver(PIP, 5.0) == answer
    assert shown[0].startswith("mercury asks permission")


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@pytest.mark.parametrize(("stdin_tty", "stdout_tty", "asks"), [
    (True, True, True), (True, False, False), (False, True, False), (False, False, False)])
def test_only_a_terminal_on_both_ends_can_ask(stdin_tty: bool, stdout_tty: bool,
                                              asks: bool) -> None:
    found = terminal_approver(_Stream(stdin_tty), _Stream(stdout_tty), io.StringIO())
    assert (found is not None) is asks
