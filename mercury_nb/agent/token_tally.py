"""TokenTally: the prompt-size estimate kept per message, so a step measures only new messages.

:func:`mercury_nb.contract.recovery.memory_governor.estimate_tokens` walks every message's
text; before each request of a long task that is the whole conversation again. The tally keeps
each message's :func:`~mercury_nb.contract.recovery.memory_governor.message_tokens` by the
message object's identity, together with the identity of its ``content`` and ``tool_calls``:
a message measured once is not measured again unless one of them was replaced (compaction and
summaries build new messages or assign new content, so they are measured anew). The sum is
always equal to ``estimate_tokens`` of the same list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mercury_nb.contract.recovery import memory_governor

_Entry = list[Any]
"""[the message (kept so its id is not reused), its content, its tool calls, its tokens, the
number of the last call that saw it]."""

SLACK = 64
"""Entries beyond twice the list's length before messages no recent call saw are dropped."""

RECENT_CALLS = 8
"""Calls an entry survives unseen (the governor and the window fit also ask for prefixes)."""


@dataclass
class TokenTally:
    """Per-message token estimates of one task's conversation."""

    _known: dict[int, _Entry] = field(default_factory=dict, repr=False)
    _calls: int = 0
    measured: int = 0
    """Messages measured so far (each new or changed message once): what a step costs."""

    @property
    def held(self) -> int:
        """Messages the tally holds on to (the list's, plus ones recent calls saw)."""
        return len(self._known)

    def tokens(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """``estimate_tokens(messages)``, measuring only the messages not seen unchanged."""
        self._calls += 1
        total = memory_governor.REPLY_PRIMING_TOKENS
        for message in messages:
            total += self._of(message)
        if len(self._known) > 2 * len(messages) + SLACK:
            oldest = self._calls - RECENT_CALLS
            self._known = {key: entry for key, entry in self._known.items()
                           if entry[4] > oldest}
        return total

    def _of(self, message: Mapping[str, Any]) -> int:
        content, calls = message.get("content"), message.get("tool_calls")
        entry = self._known.get(id(message))
        if entry is not None and entry[0] is message and entry[1] is content \
                and entry[2] is calls:
            entry[4] = self._calls
            return int(entry[3])
        tokens = memory_governor.message_tokens(message)
        self.measured += 1
        self._known[id(message)] = [message, content, calls, tokens, self._calls]
        return tokens
