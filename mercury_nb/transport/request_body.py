"""The JSON bytes of a chat-completions request, each message of the conversation serialized
once over a whole task.

A task sends its whole conversation again on every step, so serializing it whole each time
would grow every step's cost with the conversation. Messages never change once in the
conversation (compaction replaces them, as the ledger's checkpoints also rely on), so each
message's JSON is made once and every later body joins the stored pieces. Only the pieces of
the latest body are kept: the cache never outgrows one request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def encode_json(data: Any) -> bytes:
    """``data`` as the UTF-8 JSON the openai SDK sends (compact, non-ASCII kept, no NaN)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class BodyEncoder:
    """Encodes one model's successive request bodies (see the module docstring)."""

    def __init__(self) -> None:
        self._pieces: dict[int, tuple[Any, bytes]] = {}
        """id(message) -> (the message, kept alive so its id stays its own; its JSON)."""
        self.serialized = 0
        """Messages serialized so far (the per-step work the tests count)."""

    def encode(self, body: Mapping[str, Any]) -> bytes:
        """``body`` as JSON bytes; its ``messages`` from the stored pieces where known (the
        same bytes :func:`encode_json` gives for the whole body)."""
        pieces: dict[int, tuple[Any, bytes]] = {}
        parts = []
        for message in body.get("messages") or ():
            known = pieces.get(id(message)) or self._pieces.get(id(message))
            if known is None or known[0] is not message:
                known = (message, encode_json(message))
                self.serialized += 1
            pieces[id(message)] = known
            parts.append(known[1])
        self._pieces = pieces
        head = encode_json({key: value for key, value in body.items() if key != "messages"})
        messages = b'"messages":[' + b",".join(parts) + b"]"
        return b"{" + messages + (b"," + head[1:] if len(head) > 2 else b"}")
