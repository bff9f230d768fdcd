"""The CLI's approver: asks on the terminal with Allow once / Always allow <rule> / Deny.

Only a CLI whose stdin and stdout are both terminals can ask (:func:`terminal_approver`);
anywhere else there is no approver and what the permission mode asks about is denied. The
answer is read on a daemon thread, so a question left unanswered past the timeout (a
denial) never keeps the process alive.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from typing import TextIO

from mercury_nb.contract.permissions import ApprovalAnswer, ApprovalRequest

CHOICES_WITH_RULE = "[o] Allow once   [a] Always allow `{rule}`   [d] Deny"
CHOICES = "[o] Allow once   [d] Deny"


def prompt_text(request: ApprovalRequest) -> str:
    """The question as the terminal shows it: what, the detail, the choices."""
    lines = [f"mercury asks permission to {request.what}"]
    if request.detail:
        lines += ["  " + line for line in request.detail.splitlines()]
    rule = request.suggested_rule
    lines.append(CHOICES_WITH_RULE.format(rule=rule) if rule is not None else CHOICES)
    return "\n".join(lines) + "\n> "


def parse_choice(text: str, *, has_rule: bool) -> ApprovalAnswer | None:
    """The answer typed (None: not one of the choices; ask again)."""
    word = text.strip().lower()
    if word in ("o", "once", "allow once", "y", "yes"):
        return "allow-once"
    if has_rule and word in ("a", "always", "always allow"):
        return "always-allow"
    if word in ("d", "deny", "n", "no"):
        return "deny"
    return None


class TerminalApprover:
    """Asks through ``write`` and reads the answer with ``read_line`` (EOF: deny)."""

    def __init__(self, read_line: Callable[[], str], write: Callable[[str], None]) -> None:
        self._read_line = read_line
        self._write = write

    def _ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        has_rule = request.suggested_rule is not None
        self._write(prompt_text(request))
        while True:
            line = self._read_line()
            if not line:  # end of input: nobody answers
                return "deny"
            answer = parse_choice(line, has_rule=has_rule)
            if answer is not None:
                return answer
            self._write((CHOICES_WITH_RULE.format(rule=request.suggested_rule) if has_rule
                         else CHOICES) + "\n> ")

    async def __call__(self, request: ApprovalRequest, timeout_s: float) -> ApprovalAnswer:
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[ApprovalAnswer] = loop.create_future()

        def settle(answer: ApprovalAnswer | BaseException) -> None:
            if answered.done():
                return
            if isinstance(answer, BaseException):
                answered.set_exception(answer)
            else:
                answered.set_result(answer)

        def ask() -> None:
            try:
                result: ApprovalAnswer | BaseException = self._ask(request)
            except Exception as error:  # the caller denies
                result = error
            loop.call_soon_threadsafe(settle, result)

        threading.Thread(target=ask, name="mercury-approval", daemon=True).start()
        return await asyncio.wait_for(answered, timeout_s)


def terminal_approver(stdin: TextIO | None = None, stdout: TextIO | None = None,
                      prompt: TextIO | None = None) -> TerminalApprover | None:
    """An approver on the terminal when stdin and stdout are both terminals (the prompt goes
    to ``prompt``, default stderr, beside the live progress); else None (deny)."""
    source, shown = stdin or sys.stdin, stdout or sys.stdout
    out = prompt or sys.stderr
    try:
        if not (source.isatty() and shown.isatty()):
            return None
    except (AttributeError, ValueError, OSError):
        return None

    def write(text: str) -> None:
        out.write(text)
        out.flush()

    return TerminalApprover(source.readline, write)
