"""Hostile texts, cut: a secret that straddles any cut of a text (head and tail, stream,
long line, compaction, head-only clip) is masked whole, never kept but for a few characters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.tool_runner import TOOL_RESULT_CUT, cap_text, clean_result
from mercury_nb.contract.banners import blocked_clause
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.compaction import compact_messages
from mercury_nb.contract.redaction import redact
from mercury_nb.contract.text_cut import clip, fit_head_and_tail, keep_head_and_tail
from mercury_nb.tools.base import ToolContext
from mercury_nb.tools.commands import HeadTailBuffer
from mercury_nb.tools.file_reading import read_page
from mercury_nb.tools.files import head_tail
from mercury_nb.tools.registry import default_registry
from mercury_nb.workspace.confinement import Workspace

# --- item 5: secrets that straddle a cut ----------------------------------------------

ENV_SECRET = "s3cr3t-Deploy-Value-9a8b7c6d5e4f3g2h1"
SECRETS = {  # the text put in the output -> the part of it that must never show
    "env-value": (ENV_SECRET, ENV_SECRET),
    "sk-key": ("sk-proj-AbCdEf0123456789XyZwvu", "AbCdEf0123456789XyZwvu"),
    "github-token": ("ghp_" + "Zq9" * 12, "Zq9" * 12),
    "aws-key": ("AKIA" + "QWERTYUIOPASDFGH", "QWERTYUIOPASDFGH"),
    "bearer": ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload42",
               "eyJhbGciOiJIUzI1NiJ9.payload42"),
    "password-assignment": ("DB_PASSWORD=hunter2hunter2hunter2", "hunter2hunter2hunter2"),
}
FILLER = "lorem ipsum dolor sit amet "


def straddling(secret: str, at: int, size: int) -> str:
    """``size`` characters of filler with ``secret`` crossing index ``at`` (half each side)."""
    start = max(0, at - len(secret) // 2)
    body = (FILLER * (size // len(FILLER) + 2))[:size]
    return body[:start] + " " + secret + " " + body[start + len(secret) + 2:]


def assert_no_piece(text: str, value: str) -> None:
    """No six characters in a row of ``value`` (the secret) are left in ``text``."""
    pieces = {value[i:i + 6] for i in range(len(value) - 5)}
    assert not [piece for piece in pieces if piece in text], text


def _cut_places() -> dict[str, Any]:
    """Each place a text is cut: ``(text, secrets) -> what is kept``, and where it cuts."""
    def run_buffer(text: str, secrets: tuple[str, ...]) -> str:
        buffer = HeadTailBuffer(head=300, tail=300, secrets=secrets)
        for at in range(0, len(text), 7):  # a stream in small pieces
            buffer.add(text[at:at + 7])
        return buffer.render()

    def compacted(text: str, config: MercuryConfig) -> str:
        """``text`` as an old tool result the compaction shortened (through its public call:
        the task, the text, then enough recent messages to leave it old)."""
        messages = [{"role": "user", "content": "the task"},
                    {"role": "tool", "tool_call_id": "c1", "content": text},
                    *({"role": "user", "content": "later"} for _ in range(10))]
        return str(compact_messages(messages, config, keep_recent=10).messages[1]["content"])

    marker = lambda cut: f"[{cut} cut]"  # noqa: E731
    compaction = MercuryConfig(compaction_min_chars=256, compaction_head_chars=300,
                               compaction_tail_chars=300)
    return {
        "keep-head-and-tail": (lambda t, s: keep_head_and_tail(t, 600, marker, s), 300, 300),
        "fit-head-and-tail": (lambda t, s: fit_head_and_tail(t, 609, marker, s), 300, 300),
        "tool-result-cap": (lambda t, s: cap_text(redact(t, s), 700), None, None),
        "command-output-stream": (run_buffer, 300, 300),
        "compaction": (lambda t, s: compacted(redact(t, s), compaction), 300, 300),
        "clip": (lambda t, s: clip(t, 300, s), 299, None),
        "banner-blocker": (lambda t, s: blocked_clause(redact(t, s), 300), 300, None),
        "notebook-cells": (lambda t, s: head_tail(t, 600, secrets=s), 300, 300),
    }


CUT_PLACES = _cut_places()


EDGES = [(place, edge) for place, (_, head, tail) in CUT_PLACES.items()
         for edge, where in (("head", head), ("tail", tail)) if where is not None
         or place == "tool-result-cap"]


@pytest.mark.parametrize("shape", SECRETS, ids=SECRETS)
@pytest.mark.parametrize(("place", "edge"), EDGES, ids=[f"{p}-{e}" for p, e in EDGES])
def test_a_secret_straddling_a_cut_is_masked_whole(place: str, shape: str, edge: str) -> None:
    cut, head, tail = CUT_PLACES[place]
    secret, value = SECRETS[shape]
    size = 4000
    if place == "tool-result-cap":  # the cap's cut: where its head ends, its tail begins
        head = tail = (700 - len(TOOL_RESULT_CUT.format(cut=size))) // 2
    at = head if edge == "head" else size - tail
    text = straddling(secret, at, size)
    kept = cut(text, (ENV_SECRET,))
    assert len(kept) < len(text)  # it was cut
    assert_no_piece(kept, value)


@pytest.mark.parametrize("shape", SECRETS, ids=SECRETS)
@pytest.mark.parametrize("length", ["over-budget", "four-times-over"])
def test_a_secret_straddling_the_cut_of_a_long_line_read_is_masked(
    tmp_path: Path, shape: str, length: str
) -> None:
    secret, value = SECRETS[shape]
    budget = 400
    size = 1200 if length == "over-budget" else 20_000  # the second is read as a stream
    line = straddling(secret, budget // 2, size).replace("\n", " ")
    (tmp_path / "log.txt").write_text(line + "\n", encoding="utf-8")
    page = read_page(tmp_path, tmp_path / "log.txt", "log.txt", offset=1, limit=None,
                     budget=budget, scan_bytes=1 << 28, secrets=(ENV_SECRET,))
    assert len(page.content()) < size
    assert_no_piece(page.content(), value)


async def test_a_secret_straddling_the_cut_of_command_output_is_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", ENV_SECRET)
    config = MercuryConfig(workdir=tmp_path, command_output_head_chars=100,
                           command_output_tail_chars=100)
    ctx = ToolContext(root=Workspace(tmp_path), config=config)
    for shape, (secret, value) in SECRETS.items():
        (tmp_path / "out.txt").write_text(straddling(secret, 100, 3000), encoding="utf-8")
        result = await default_registry().execute(
            "run_command", json.dumps({"command": "cat out.txt"}), ctx)
        assert "characters of output cut" in result.content, shape
        assert_no_piece(clean_result(result, ctx).content, value)
