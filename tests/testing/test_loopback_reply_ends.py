"""The loopback server notes when each reply ends, and can keep no request bodies."""

from __future__ import annotations

import json
import urllib.request

from mercury_nb.testing import Turn
from mercury_nb.testing.loopback_server import LoopbackServer


def _post(url: str, body: dict[str, object]) -> bytes:
    request = urllib.request.Request(f"{url}/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return bytes(reply.read())


def test_each_reply_end_follows_its_request_and_bodies_can_be_left_out() -> None:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x" * 99}]}
    with LoopbackServer([Turn(text="one"), Turn(text="two")], keep_bodies=False) as server:
        _post(server.url, body)
        _post(server.url, body)
        times, ends = list(server.request_times), list(server.reply_ends)
        assert server.requests == [{"model": "m"}, {"model": "m"}]
    assert len(ends) == 2 and times[0] <= ends[0] <= times[1] <= ends[1]
