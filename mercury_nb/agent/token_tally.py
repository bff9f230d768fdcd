"""TokenTally: the prompt-size estimate kept per message, so a step measures only new messages.

:func:`mercury_nb.contract.recovery.memory_governor.estimate_tokens` walks every message's
text; before each request of a long task that is the whole conversation again. The tally keeps
each message's :func:`~mercury_nb.contract.recovery.memory_governor.message_tokens` by the
message object's identity: a message measured once is not measured again. Messages never
change once in the conversation (compaction and summaries replace them with new ones, which
are measured anew); the request body's encoder and the ledger's checkpoints rely on the same,
and ``tests/agent/test_messages_stay_as_sent.py`` checks it over whole tasks. The sum is
always equal to ``estimate_tokens`` of the same list. It also keeps running sums for the last
lists it was asked about: the conversation of the next step extends the one before, and a
start of it (the protected prefix) is one of its sums, so a step walks only its new messages
in Python; the shared start is compared by message identity in C (a pointer comparison per
message: reading each message's content and tool calls as well cost a 1,000-step task about
half a second, growing with the conversation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import is_
from typing import Any

from mercury_nb.contract.recovery import memory_governor

_Entry = list[Any]
"""[the message (kept so its id is not reused), its tokens, the number of the last call that
saw it]."""

SLACK = 64
"""Entries beyond twice the list's length before messages no recent call saw are dropped."""

RECENT_CALLS = 8
"""Calls an entry survives unseen (the governor and the window fit also ask for prefixes)."""


@dataclass
class _Memo:
    """One list the tally was asked about, with running sums: a later list that is a start
    of it, or extends it, is summed from it (its shared start checked by identity in C)."""

    messages: list[Any]
    sums: list[int]
    """``sums[i]``: the tokens of ``messages[:i]``."""
    used: int


MEMOS = 2
"""Lists remembered at once: the conversation, and one other (the system messages alone)."""


@dataclass
class TokenTally:
    """Per-message token estimates of one task's conversation."""

    _known: dict[int, _Entry] = field(default_factory=dict, repr=False)
    _memos: list[_Memo] = field(default_factory=list, repr=False)
    _calls: int = 0
    measured: int = 0
    """Messages measured so far (each new or changed message once): what a step costs."""
    prunes: int = 0
    """Times the per-message entries were walked to drop those no recent call saw."""
    visited: int = 0
    """Messages looked at one by one in Python so far: a list that extends (or is a start of)
    one asked about before costs only its new messages."""

    @property
    def held(self) -> int:
        """Messages the tally holds on to (the lists', plus ones recent calls saw)."""
        ids = {id(message) for memo in self._memos for message in memo.messages}
        return len(ids | self._known.keys())

    def tokens(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """``estimate_tokens(messages)``, measuring only the messages not seen unchanged."""
        self._calls += 1
        listed = list(messages)
        for memo in self._memos:
            total = self._from_memo(memo, listed)
            if total is not None:
                memo.used = self._calls
                break
        else:
            total = self._remember(listed)
        oldest = self._calls - RECENT_CALLS
        self._memos = [memo for memo in self._memos if memo.used > oldest]
        longest = max((len(memo.messages) for memo in self._memos), default=len(listed))
        if len(self._known) > 2 * longest + SLACK:  # not the short list just asked about:
            self.prunes += 1  # that pruned (and walked every entry) at every step
            self._known = {key: entry for key, entry in self._known.items()
                           if entry[2] > oldest}
        return memory_governor.REPLY_PRIMING_TOKENS + total

    def _from_memo(self, memo: _Memo, listed: list[Any]) -> int | None:
        shared = min(len(listed), len(memo.messages))
        if not all(map(is_, islice(listed, shared), memo.messages)):
            return None
        for message in islice(listed, shared, None):
            memo.sums.append(memo.sums[-1] + self._of(message))
            memo.messages.append(message)
        return memo.sums[len(listed)]

    def _remember(self, listed: list[Any]) -> int:
        """Sum ``listed`` message by message, and remember it in place of the list used
        least recently."""
        sums = [0]
        for message in listed:
            sums.append(sums[-1] + self._of(message))
        memo = _Memo(listed, sums, self._calls)
        if len(self._memos) >= MEMOS:
            self._memos.remove(min(self._memos, key=lambda kept: kept.used))
        self._memos.append(memo)
        return sums[-1]

    def _of(self, message: Mapping[str, Any]) -> int:
        self.visited += 1
        entry = self._known.get(id(message))
        if entry is not None and entry[0] is message:
            entry[2] = self._calls
            return int(entry[1])
        tokens = memory_governor.message_tokens(message)
        self.measured += 1
        self._known[id(message)] = [message, tokens, self._calls]
        return tokens
