"""The JSON bytes of a chat-completions request, each message of the conversation serialized
once over a whole task.

A task sends its whole conversation again on every step, so serializing it whole each time
would grow every step's cost with the conversation. Messages never change once in the
conversation (compaction replaces them, as the ledger's checkpoints also rely on), so each
message's JSON is made once, and a body that extends the latest one (each step's) joins only
its new pieces to the bytes already joined: the shared start is checked by identity in C, not
walked in Python. Only the pieces of the latest body are kept: the cache never outgrows one
request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import islice
from operator import is_
from typing import Any


def encode_json(data: Any) -> bytes:
    """``data`` as the UTF-8 JSON the openai SDK sends (compact, non-ASCII kept, no NaN)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class BodyEncoder:
    """Encodes one model's successive request bodies (see the module docstring)."""

    def __init__(self) -> None:
        self._sent: list[Any] = []
        """The messages of the latest body, in order (kept alive so their ids stay theirs)."""
        self._parts: list[bytes] = []
        """Their JSON, in the same order."""
        self._joined = bytearray()
        """``b",".join(self._parts)``, grown in place by the new parts only (joining the
        bytes already joined again copied the whole conversation once more each step)."""
        self.serialized = 0
        """Messages serialized so far (the per-step work the tests count)."""
        self.visited = 0
        """Messages looked at one by one in Python so far: on a body that extends the latest
        one (each step's), only its new messages; the shared start is checked in C."""

    def encode(self, body: Mapping[str, Any]) -> bytes:
        """``body`` as JSON bytes; its ``messages`` from the stored pieces where known (the
        same bytes :func:`encode_json` gives for the whole body)."""
        messages = list(body.get("messages") or ())
        kept = len(self._sent)
        if kept and len(messages) >= kept and all(map(is_, islice(messages, kept), self._sent)):
            for message in islice(messages, kept, None):
                part = self._part(message)
                self._parts.append(part)
                if self._joined:
                    self._joined += b","
                self._joined += part
        else:  # a new conversation, or compaction replaced messages: reuse what is still sent
            pieces = {id(message): (message, part)
                      for message, part in zip(self._sent, self._parts, strict=True)}
            self._parts = [self._known(pieces, message) for message in messages]
            self._joined = bytearray(b",").join(self._parts)
        self._sent = messages
        head = encode_json({key: value for key, value in body.items() if key != "messages"})
        tail = b"]," + head[1:] if len(head) > 2 else b"]}"
        return b"".join((b'{"messages":[', self._joined, tail))  # one copy of the messages

    def _part(self, message: Any) -> bytes:
        self.visited += 1
        self.serialized += 1
        return encode_json(message)

    def _known(self, pieces: dict[int, tuple[Any, bytes]], message: Any) -> bytes:
        known = pieces.get(id(message))
        if known is None or known[0] is not message:
            return self._part(message)
        self.visited += 1
        return known[1]
