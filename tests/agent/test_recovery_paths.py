"""Issue-3 contract paths end to end: stale checks, cut writes, notebooks, output limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import DropMidStream, HttpError, Turn, call


def cfg(tmp_path: Path, **kw: Any) -> MercuryConfig:
    return MercuryConfig(permissions="auto", workdir=tmp_path, retry_base_s=0.0, **kw)


PASSING_TEST = "def test_ok():\n    assert True\n"


async def test_check_before_last_edit_is_not_evidence(tmp_path: Path, backend) -> None:
    fake = backend(
        [
            Turn(tool_calls=(call("create_file", path="test_a.py", content=PASSING_TEST),)),
            Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
            Turn(
                tool_calls=(call("edit_file", path="test_a.py", old_text="", new_text="X = 1\n"),)
            ),
            Turn(text="Done."),
            Turn(text="Done, really."),  # ignores the forced round
        ]
    )
    outcome = await run_new_session("add a test module", cfg(tmp_path), model=fake.model)
    assert outcome.status == "paused"
    assert "Task complete" not in outcome.banner
    assert "Last check: python -m pytest -q (ran before the latest changes)" in outcome.banner
    assert fake.requests[4]["tool_choice"] == "required"


async def test_cut_file_write_is_not_written_and_sectioned_writes_finish(
    tmp_path: Path, backend
) -> None:
    big = "".join(f"line {i}\n" for i in range(300))
    fake = backend(
        [
            Turn(
                tool_calls=(call("create_file", path="big.txt", content=big),),
                finish_reason="length",
            ),
            Turn(tool_calls=(call("create_file", path="big.txt", content=big[:800]),)),
            Turn(tool_calls=(call("edit_file", path="big.txt", old_text="", new_text=big[800:]),)),
            Turn(text="Wrote big.txt in sections."),
        ]
    )
    outcome = await run_new_session("write big.txt", cfg(tmp_path), model=fake.model)
    second = fake.requests[1]["messages"]
    guidance = [
        m
        for m in second
        if m["role"] == "user" and str(m["content"]).startswith("[SYSTEM: WRITE TRUNCATED]")
    ]
    assert guidance, "the request after a cut write must demand sectioned writes"
    assert not any(m.get("tool_calls") for m in second if m["role"] == "assistant")
    assert outcome.status == "completed", outcome.banner
    assert (tmp_path / "big.txt").read_text() == big


async def test_cut_write_leaves_no_file(tmp_path: Path, scripted_model) -> None:
    model = scripted_model(
        [
            Turn(
                tool_calls=(call("create_file", path="half.txt", content="first\n" * 50),),
                finish_reason="length",
            ),
            # create_file fails on an existing file, so this only succeeds if the cut write
            # left nothing behind
            Turn(tool_calls=(call("create_file", path="half.txt", content="second\n"),)),
            Turn(text="Wrote half.txt."),
        ]
    )
    outcome = await run_new_session("write half.txt", cfg(tmp_path), model=model)
    assert outcome.status == "completed", outcome.banner
    assert (tmp_path / "half.txt").read_text() == "second\n"


def _notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, str(path))


async def test_notebook_edited_to_raise_does_not_complete(tmp_path: Path, backend) -> None:
    _notebook(tmp_path / "analysis.ipynb")
    fake = backend(
        [
            Turn(
                tool_calls=(
                    call(
                        "insert_notebook_cell",
                        path="analysis.ipynb",
                        index=1,
                        cell_type="code",
                        source="raise ValueError('boom')",
                    ),
                )
            ),
            Turn(text="Added the cell."),
            Turn(text="Done."),
        ]
    )
    outcome = await run_new_session("add a cell to analysis.ipynb", cfg(tmp_path), model=fake.model)
    assert outcome.status == "paused"
    assert "Task complete" not in outcome.banner
    assert any(
        e.command == "run notebook analysis.ipynb" and e.exit_code == 1 for e in outcome.evidence
    )
    # the blocker names the failing cell and the error's last line
    assert ("Last check: run notebook analysis.ipynb ✗ (cell 2: ValueError: boom)"
            in outcome.banner), outcome.banner


async def test_notebook_that_runs_clean_is_evidence(tmp_path: Path, scripted_model) -> None:
    _notebook(tmp_path / "analysis.ipynb")
    model = scripted_model(
        [
            Turn(
                tool_calls=(
                    call(
                        "insert_notebook_cell",
                        path="analysis.ipynb",
                        index=1,
                        cell_type="code",
                        source="y = x + 1",
                    ),
                )
            ),
            Turn(text="Added the cell."),
        ]
    )
    outcome = await run_new_session("add a cell to analysis.ipynb", cfg(tmp_path), model=model)
    assert outcome.status == "completed", outcome.banner
    assert "✓ Verified: analysis.ipynb ran top to bottom in a fresh kernel" in outcome.banner


async def test_rejected_max_tokens_is_halved_and_kept(tmp_path: Path, backend) -> None:
    too_big = HttpError(
        400, message="max_tokens is too large: 32768. This model supports at most 8192"
    )
    fake = backend(
        [
            Turn(fault=too_big),
            Turn(fault=too_big),
            Turn(tool_calls=(call("list_dir", path="."),)),
            Turn(text="Nothing to change."),
        ]
    )
    config = cfg(tmp_path, context_window=131_072)  # its output fraction is above 32768
    outcome = await run_new_session("Which files are here?", config, model=fake.model)
    assert [r["max_tokens"] for r in fake.requests] == [32768, 16384, 8192, 8192]
    assert outcome.status == "completed"


async def test_stream_dropped_mid_tool_call_recovers_without_half_file(
    tmp_path: Path, backend
) -> None:
    fake = backend(
        [
            Turn(
                tool_calls=(call("create_file", path="a.txt", content="hello " * 50),),
                fault=DropMidStream(after_chunks=3),
            ),
            Turn(tool_calls=(call("create_file", path="a.txt", content="hello\n"),)),
            Turn(text="Created a.txt."),
        ]
    )
    outcome = await run_new_session("create a.txt", cfg(tmp_path), model=fake.model)
    assert outcome.status == "completed", outcome.banner
    assert (tmp_path / "a.txt").read_text() == "hello\n"
    # no tool call had completed: the same request again, nothing of the cut reply kept
    assert fake.requests[1]["messages"] == fake.requests[0]["messages"]


async def test_broken_stream_never_completes_when_retries_are_spent(
    tmp_path: Path, backend
) -> None:
    fake = backend([Turn(text="partial answer", finish_reason=None)])
    outcome = await run_new_session("What is 2+2?", cfg(tmp_path, retry_attempts=0),
                                    model=fake.model)
    assert outcome.status == "failed"
    assert outcome.verdict == "interrupted"
    assert outcome.answer is None
    assert outcome.banner.startswith("All LLM providers failed.")


SORRY = "I'm sorry, " * 60  # a rambling reply the output limit cut (a real small model's)


def last_user_text(body: dict[str, Any]) -> str:
    return str([m for m in body["messages"] if m["role"] == "user"][-1]["content"])


async def test_cut_prose_of_a_work_task_is_told_to_act_not_to_go_on_then_pauses(
    tmp_path: Path, backend
) -> None:
    fake = backend([Turn(text=SORRY, finish_reason="length"),
                    Turn(text=SORRY, finish_reason="length")])
    outcome = await run_new_session("Add a function add(a, b) to calc.py", cfg(tmp_path),
                                    model=fake.model)
    assert outcome.status == "paused"
    assert outcome.banner.startswith(
        "I've paused for now — my replies kept hitting the output-token limit.")
    _, second = fake.requests
    told = last_user_text(second)
    assert told.startswith("[SYSTEM] Your previous response hit the output-token limit and was "
                           "cut off… Do not continue it and do not repeat it. Take the next "
                           "step of the task now with a tool call")
    assert "Continue exactly" not in told
    assert second["tools"] and second["tool_choice"] == "auto"


async def test_a_cut_answer_is_asked_again_shorter_within_half_the_cap(
    tmp_path: Path, backend
) -> None:
    fake = backend([Turn(text="The folder holds " + "many things, " * 80, finish_reason="length"),
                    Turn(text="An empty folder.")])
    outcome = await run_new_session("What is in this folder?", cfg(tmp_path, mode="chat"),
                                    model=fake.model)
    assert outcome.status == "completed", outcome.banner
    first, second = fake.requests
    half = first["max_tokens"] // 2
    assert last_user_text(second) == (
        "[SYSTEM] Your previous response hit the output-token limit and was cut off… Do not "
        f"continue it. Answer again from the start, shorter and complete, within {half:,} "
        f"tokens (about {half * 3 // 4:,} words).")
    assert outcome.answer == "An empty folder."
