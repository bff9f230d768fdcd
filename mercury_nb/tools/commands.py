"""The run_command tool: a shell command in the workspace, with timeout, kill and capped output.

What the command gets (its environment without your secrets, the sandbox) is decided in
:mod:`mercury_nb.tools.command_launch`.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, Field

from mercury_nb.contract.redaction import known_secrets
from mercury_nb.contract.text_cut import CUT_REACH, cut_edges
from mercury_nb.tools import processes
from mercury_nb.tools.base import ToolContext, ToolError, ToolResult
from mercury_nb.tools.command_launch import prepare, shell_argv
from mercury_nb.tools.function_tool import FunctionTool, workspace_of
from mercury_nb.tools.processes import CommandProcesses, KillReport

_READ_CHUNK = 65536
_DRAIN_GRACE_S = 2.0
"""How long output is still read after the command exits (background children may hold it)."""
_REAP_GRACE_S = 5.0
_EXIT_POLL_S = 0.1
_OBSERVE_EVERY = 5
"""Polls between two records of the command's descendants (see ``processes``)."""
_COMMAND_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "PYTHONUNBUFFERED": "1"}


class RunCommandArgs(BaseModel):
    command: str = Field(description="Shell command, run from the workspace root.")
    timeout_s: float | None = Field(
        default=None,
        description="Seconds before the command and its children are killed (optional).",
    )


class HeadTailBuffer:
    """Keeps the first ``head`` and last ``tail`` characters of a stream of any length.

    Each end is held with :data:`CUT_REACH` characters more, so the rendered cut is redacted
    before it is made (key-shaped tokens and ``secrets``): a secret that straddles the cut is
    masked whole, never kept but for a few characters."""

    def __init__(self, head: int, tail: int, secrets: Iterable[str] = ()) -> None:
        self.head_limit = head
        self.tail_limit = tail
        self.secrets = tuple(secrets)
        self.head = ""
        self.tail = ""
        self.total = 0

    def add(self, text: str) -> None:
        self.total += len(text)
        room = self.head_limit + CUT_REACH - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if text:
            self.tail += text
            held = self.tail_limit + CUT_REACH
            if len(self.tail) > 2 * held:
                self.tail = self.tail[-held:]

    @property
    def cut(self) -> int:
        """Characters dropped from the middle."""
        return max(0, self.total - self.head_limit - self.tail_limit)

    def render(self) -> str:
        if self.cut == 0:
            return self.head + self.tail  # all of it is held
        held = self.tail_limit + CUT_REACH
        ending = self.tail[-held:] if len(self.tail) >= held else (self.head + self.tail)[-held:]
        head, tail = cut_edges(self.head, ending, self.head_limit, self.tail_limit,
                               self.secrets)
        return f"{head}\n[… {self.cut} characters of output cut …]\n{tail}"


def effective_timeout(requested: float | None, default: float, ceiling: float) -> float:
    """The model's timeout when it gave a positive one, else the default; never above ceiling."""
    chosen = requested if requested is not None and requested > 0 else default
    return min(chosen, ceiling)


def _notify(observer: Callable[..., Any] | None, *args: Any) -> None:
    if observer is None:
        return
    with contextlib.suppress(Exception):  # a broken observer must not break the command
        observer(*args)


async def _pump(
    stream: asyncio.StreamReader, buffer: HeadTailBuffer, on_output: Callable[[str], Any] | None
) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := await stream.read(_READ_CHUNK):
        text = decoder.decode(chunk)
        if text:
            buffer.add(text)
            _notify(on_output, text)
    rest = decoder.decode(b"", final=True)
    if rest:
        buffer.add(rest)
        _notify(on_output, rest)


async def _wait_for_exit(
    proc: asyncio.subprocess.Process, tracked: CommandProcesses | None = None
) -> int:
    """The exit code as soon as the shell exits; meanwhile ``tracked`` records its descendants.

    ``Process.wait()`` also waits until every holder of the output pipe has closed it (on
    Python 3.11), so a backgrounded child would hold it up; the returncode is polled instead.
    """
    waiter = asyncio.ensure_future(proc.wait())
    polls = 0
    try:
        while proc.returncode is None:
            await asyncio.wait({waiter}, timeout=_EXIT_POLL_S)
            polls += 1
            if tracked is not None and polls % _OBSERVE_EVERY == 1:
                tracked.observe()
        return proc.returncode
    finally:
        waiter.cancel()


def _close_abandoned(starting: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """A shell whose start was cancelled came up after all (and was killed): close it."""
    if starting.cancelled() or starting.exception() is not None:
        return
    transport = getattr(starting.result(), "_transport", None)
    if transport is not None:
        transport.close()


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    """Stop reading output that a leftover background process may still hold open."""
    transport = getattr(proc, "_transport", None)
    if transport is not None and proc.returncode is not None:
        transport.close()


def _describe_exit(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"exit code: {code} (killed by {signal.Signals(-code).name})"
    return f"exit code: {code}"


async def run_command(args: RunCommandArgs, ctx: ToolContext) -> ToolResult:
    command = args.command
    if not command.strip():
        raise ToolError("command is empty")
    on_command = ctx.on_command  # the stall watchdog counts a running command as progress
    _notify(on_command, True, command)
    try:
        return await _run_shell(command, args, ctx)
    finally:
        _notify(on_command, False, command)


async def _run_shell(command: str, args: RunCommandArgs, ctx: ToolContext) -> ToolResult:
    config = ctx.config
    timeout = effective_timeout(
        args.timeout_s, config.command_timeout_s, config.max_command_timeout_s
    )
    on_output = ctx.on_output
    buffer = HeadTailBuffer(config.command_output_head_chars, config.command_output_tail_chars,
                            known_secrets(config, os.environ))
    root = workspace_of(ctx).root
    launch = prepare(shell_argv(command), config, root, extra_env=_COMMAND_ENV)
    tracked = processes.register(ctx.process_scope)
    starting = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *launch.argv,
        cwd=root,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
        env=tracked.environment(launch.env),
    ))
    try:
        # shielded: asyncio's own cleanup of a start cancelled after the shell ran waits for
        # the shell's exit, and was seen to wait forever; the tree is killed here instead
        proc = await asyncio.shield(starting)
    except BaseException:
        # a Stop while the shell was starting: it may already run and have forked, and asyncio
        # kills only the shell; its children carry the marker, so they are found and killed
        starting.add_done_callback(_close_abandoned)
        processes.kill_tree(tracked)
        processes.forget(tracked)
        raise
    tracked.attach(proc.pid)
    assert proc.stdout is not None
    pump = asyncio.create_task(_pump(proc.stdout, buffer, on_output))
    exit_code: int | None = None
    timed_out = False
    killed = KillReport()
    try:
        try:
            async with asyncio.timeout(timeout):
                exit_code = await _wait_for_exit(proc, tracked)
        except TimeoutError:
            timed_out = True
            killed = await asyncio.to_thread(processes.kill_tree, tracked)
            await asyncio.wait({asyncio.ensure_future(_wait_for_exit(proc))}, timeout=_REAP_GRACE_S)
        await asyncio.wait({pump}, timeout=_DRAIN_GRACE_S)
    except asyncio.CancelledError:
        # the user pressed Stop: nothing the command started survives (killed here, at once,
        # not in a thread a second cancellation could abandon)
        processes.kill_tree(tracked)
        pump.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait({asyncio.ensure_future(_wait_for_exit(proc))}, timeout=_REAP_GRACE_S)
        raise
    finally:
        output_cut_short = not pump.done()
        pump.cancel()
        _close_pipes(proc)
    running: tuple[int, ...] = ()
    if not timed_out:
        running = await asyncio.to_thread(processes.leftovers, tracked)
        if not running:
            processes.forget(tracked)
    lines = [buffer.render().rstrip("\n") or "(no output)"]
    if output_cut_short and not timed_out:
        lines.append("[output after exit not captured: a background process still holds it open]")
    if running:
        lines.append(
            f"[{len(running)} background process{'es' if len(running) > 1 else ''} it started "
            f"still running (pids {', '.join(map(str, running))}): killed when the task ends]"
        )
    if timed_out:
        lines.append(f"timed out after {timeout:g}s — {killed.describe()}")
        lines.append("exit code: none")
    else:
        assert exit_code is not None
        lines.append(_describe_exit(exit_code))
    return ToolResult(
        ok=exit_code == 0 and not timed_out,
        content="\n".join(lines),
        command=command,
        exit_code=exit_code,
        timed_out=timed_out,
    )


COMMAND_TOOLS: tuple[FunctionTool[Any], ...] = (
    FunctionTool(
        name="run_command",
        description=(
            "Run a shell command in the workspace root (stdin is empty). Output is stdout and "
            "stderr together, long output as head + tail; the exit code is reported."
        ),
        brief="Run a shell command; returns its output and exit code.",
        args_model=RunCommandArgs,
        handler=run_command,
        mutating=True,
    ),
)
