"""Broken streams over real HTTP (litellm -> loopback server): each ends in recovery and a
completed task, and no cut tool call ever writes a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.runs.resolve import with_model
from mercury_nb.testing import DropMidStream, MalformedChunk, NoFinish, Turn, call
from mercury_nb.testing.script import Fault
from mercury_nb.transport.litellm_model import LiteLLMModel

NOTES = "first line of the notes\n" * 40
SHORT = "short notes\n"


def cfg(tmp_path: Path, **kw: Any) -> MercuryConfig:
    return MercuryConfig(workdir=tmp_path, retry_base_s=0.0, **kw)


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(NoFinish(), id="no-finish-reason-no-done"),
        pytest.param(NoFinish(send_done=True), id="no-finish-reason-with-done"),
        pytest.param(DropMidStream(after_chunks=4), id="connection-dropped-mid-tool-call"),
        pytest.param(MalformedChunk(after_chunks=4), id="malformed-chunk-mid-tool-call"),
    ],
)
async def test_broken_stream_of_a_write_recovers_without_a_half_written_file(
    tmp_path: Path, loopback_server, litellm_module, fault: Fault
) -> None:
    server = loopback_server(
        [
            Turn(tool_calls=(call("create_file", path="notes.txt", content=NOTES),), fault=fault),
            # create_file refuses an existing file: this succeeds only if nothing was written
            Turn(tool_calls=(call("create_file", path="notes.txt", content=SHORT),)),
            Turn(text="notes.txt is written."),
        ]
    )
    model = LiteLLMModel("openai/mercury-test", api_base=server.url, api_key="sk-test",
                         timeout_s=30)
    outcome = await run_new_session("write notes.txt", with_model(cfg(tmp_path), model),
                                    model=model)

    assert outcome.status == "completed", outcome.banner
    assert (tmp_path / "notes.txt").read_text() == SHORT
    assert [c.path for c in outcome.changes] == ["notes.txt"]
    retry = server.requests[1]["messages"]
    assert retry == server.requests[0]["messages"]  # the same request, cleanly
    assert outcome.providers["openai/mercury-test"].startswith("interrupted")


async def test_drop_in_a_later_step_keeps_earlier_work_and_writes_no_half_file(
    tmp_path: Path, loopback_server, litellm_module
) -> None:
    server = loopback_server(
        [
            Turn(tool_calls=(call("create_file", path="a.txt", content="alpha\n"),)),
            Turn(
                tool_calls=(call("create_file", path="b.txt", content=NOTES),),
                fault=DropMidStream(after_chunks=3),
            ),
            Turn(tool_calls=(call("create_file", path="b.txt", content=SHORT),)),
            Turn(text="a.txt and b.txt are written."),
        ]
    )
    model = LiteLLMModel("openai/mercury-test", api_base=server.url, api_key="sk-test",
                         timeout_s=30)
    outcome = await run_new_session("write a.txt and b.txt", with_model(cfg(tmp_path), model),
                                    model=model)

    assert outcome.status == "completed", outcome.banner
    assert (tmp_path / "a.txt").read_text() == "alpha\n"
    assert (tmp_path / "b.txt").read_text() == SHORT
    # the completed first step is kept: the retry does not redo it
    retry = server.requests[2]["messages"]
    assert sum(1 for m in retry if m["role"] == "tool") == 1
