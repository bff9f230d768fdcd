"""run_command: exit codes, merged and capped output, timeouts and Stop kill the process group."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from mercury_nb.testing import orphans
from mercury_nb.testing.orphans import alive
from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.commands import HeadTailBuffer, effective_timeout
from mercury_nb.tools.registry import ToolRegistry

PY = shlex.quote(sys.executable)


async def run(
    registry: ToolRegistry, ctx: ToolContext, command: str, **extra: object
) -> ToolResult:
    return await registry.execute("run_command", json.dumps({"command": command, **extra}), ctx)


def wait_until_gone(pid: int) -> bool:
    """:func:`mercury_nb.testing.orphans.wait_until_gone` with a roomy deadline (it only
    bounds a failure)."""
    return orphans.wait_until_gone(pid, deadline_s=10.0)


async def test_success_reports_exit_code_and_output(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    result = await run(registry, ctx, "echo hello")
    assert result == ToolResult(
        ok=True, content="hello\nexit code: 0", command="echo hello", exit_code=0
    )


async def test_failure_is_not_ok_and_merges_stderr(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    result = await run(registry, ctx, "echo out; echo err >&2; exit 3")
    assert not result.ok
    assert result.exit_code == 3
    assert result.content == "out\nerr\nexit code: 3"


async def test_runs_in_the_workspace_with_empty_stdin(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    assert (await run(registry, ctx, "pwd")).content == f"{root}\nexit code: 0"
    assert (await run(registry, ctx, "cat")).content == "(no output)\nexit code: 0"


async def test_long_output_is_capped_as_head_and_tail(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    small = ToolContext(
        root=ctx.root,
        config=ctx.config.with_changes(
            command_output_head_chars=100, command_output_tail_chars=100
        ),
    )
    script = "import sys; sys.stdout.write('H'*100 + 'M'*5000 + 'T'*100)"
    result = await run(registry, small, f"{PY} -c {shlex.quote(script)}")
    assert result.content == (
        "H" * 100 + "\n[… 5000 characters of output cut …]\n" + "T" * 100 + "\nexit code: 0"
    )


async def test_timeout_kills_the_process_group(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await run(registry, ctx, "sleep 30 & echo $!; wait", timeout_s=0.5)
    assert result.timed_out
    assert not result.ok
    assert result.exit_code is None
    assert result.content.endswith("exit code: none")
    assert "timed out after 0.5s" in result.content
    pid = int(result.content.splitlines()[0])
    assert wait_until_gone(pid), f"sleep {pid} survived the timeout"


async def test_cancellation_kills_the_child_and_propagates(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    pid_seen = asyncio.Event()
    chunks: list[str] = []

    def on_output(text: str) -> None:
        chunks.append(text)
        if "\n" in "".join(chunks):
            pid_seen.set()

    watched = ToolContext(root=ctx.root, config=ctx.config, on_output=on_output)
    task = asyncio.create_task(run(registry, watched, "sleep 30 & echo $!; wait", timeout_s=60))
    await pid_seen.wait()
    pid = int("".join(chunks).split()[0])
    assert alive(pid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_until_gone(pid), f"sleep {pid} survived the Stop"


async def test_a_stop_while_the_shell_is_starting_kills_what_it_already_forked(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asyncio can be cancelled in create_subprocess_exec after the shell runs (while it
    connects the pipes); then it kills the shell alone. Simulated: the shell starts, forks a
    background sleep, and the cancellation arrives before run_command gets the process."""
    real = asyncio.create_subprocess_exec
    pid_file = tmp_path / "child.pid"
    started: list[asyncio.subprocess.Process] = []

    async def starting_then_cancelled(*args: object, **kwargs: object) -> object:
        started.append(await real(*args, **kwargs))  # type: ignore[arg-type]
        deadline = time.monotonic() + 10
        while not pid_file.exists() or not pid_file.read_text().strip():
            assert time.monotonic() < deadline, "the command never forked"
            await asyncio.sleep(0.01)
        raise asyncio.CancelledError

    monkeypatch.setattr(asyncio, "create_subprocess_exec", starting_then_cancelled)
    with pytest.raises(asyncio.CancelledError):
        await run(registry, ctx, f"sleep 30 & echo $! > {pid_file}; wait", timeout_s=60)
    child = int(pid_file.read_text())
    assert wait_until_gone(child), f"sleep {child} survived a Stop during the shell's start"
    assert wait_until_gone(started[0].pid), "the shell survived"


async def test_output_is_streamed_to_the_observer(registry: ToolRegistry, ctx: ToolContext) -> None:
    seen: list[str] = []
    watched = ToolContext(root=ctx.root, config=ctx.config, on_output=seen.append)
    await run(registry, watched, "echo one; echo two")
    assert "".join(seen) == "one\ntwo\n"


async def test_broken_observer_does_not_break_the_command(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    def explode(_text: str) -> None:
        raise RuntimeError("observer bug")

    watched = ToolContext(root=ctx.root, config=ctx.config, on_output=explode)
    assert (await run(registry, watched, "echo fine")).ok


async def test_background_child_holding_output_does_not_hang(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    result = await run(registry, ctx, "sleep 30 & echo $!")
    pid = int(result.content.splitlines()[0])
    try:
        assert result.exit_code == 0
        assert "background process still holds it open" in result.content
    finally:
        os.kill(pid, 9)


async def test_empty_command_is_an_error(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await run(registry, ctx, "  ")
    assert result == ToolResult(ok=False, content="Error: command is empty")


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        pytest.param(None, 120.0, id="default"),
        pytest.param(5.0, 5.0, id="given"),
        pytest.param(0.0, 120.0, id="zero-means-default"),
        pytest.param(-1.0, 120.0, id="negative-means-default"),
        pytest.param(99999.0, 1800.0, id="clamped"),
    ],
)
def test_effective_timeout(requested: float | None, expected: float) -> None:
    assert effective_timeout(requested, 120.0, 1800.0) == expected


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        pytest.param(["abc"], "abc", id="short"),
        pytest.param(["a" * 4, "b" * 4], "a" * 4 + "b" * 4, id="exactly-fits"),
        pytest.param(
            ["1234", "5678", "90"], "1234\n[… 2 characters of output cut …]\n7890", id="cut"
        ),
        pytest.param(
            ["12", "3456789", "0abc"], "1234\n[… 5 characters of output cut …]\n0abc", id="many"
        ),
    ],
)
def test_head_tail_buffer(pieces: list[str], expected: str) -> None:
    buffer = HeadTailBuffer(head=4, tail=4)
    for piece in pieces:
        buffer.add(piece)
    assert buffer.render() == expected
