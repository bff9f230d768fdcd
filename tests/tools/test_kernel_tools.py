"""inspect_variables and run_in_kernel over a plain namespace: what they return, their
refusals, the time limit, and a Stop of ``while True: pass`` (ended within 2 s)."""

from __future__ import annotations

import asyncio
import base64
import struct
import time
import zlib
from dataclasses import replace
from typing import Any

import pytest

from mercury_nb.tools.base import ToolContext
from mercury_nb.tools.kernel_access import NamespaceKernel
from mercury_nb.tools.kernel_code import running_elsewhere, stopped_code
from mercury_nb.tools.kernel_tools import (
    NOT_INTERRUPTED,
    OTHER_CELL,
    STOPPED,
    describe_display,
    png_size,
)
from mercury_nb.tools.registry import ToolRegistry, default_registry
from mercury_nb.tools.variables import NO_KERNEL


def tiny_png(width: int, height: int) -> bytes:
    """A valid PNG of ``width`` × ``height`` black pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    rows = b"".join(b"\x00" + b"\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.fixture
def kernel_registry() -> ToolRegistry:
    return default_registry(kernel=True)


def with_kernel(ctx: ToolContext, values: dict[str, Any], **changes: Any) -> ToolContext:
    config = ctx.config.with_changes(**changes) if changes else ctx.config
    return replace(ctx, config=config, kernel=NamespaceKernel(values), process_scope="t1")


async def test_without_a_kernel_both_tools_say_where_they_work(
        kernel_registry: ToolRegistry, ctx: ToolContext) -> None:
    for name, args in (("inspect_variables", {}), ("run_in_kernel", {"code": "1"})):
        result = await kernel_registry.execute(name, args, ctx)
        assert not result.ok and NO_KERNEL in result.content


async def test_inspect_variables_lists_the_namespace(kernel_registry: ToolRegistry,
                                                     ctx: ToolContext) -> None:
    ctx = with_kernel(ctx, {"x": 3, "_hidden": 1, "api_key": "abcdef123456"})
    result = await kernel_registry.execute("inspect_variables", {}, ctx)
    assert result.ok
    assert result.content.splitlines() == [
        "2 variables in your kernel:", "x: int = 3", "api_key = *** (str)"]
    named = await kernel_registry.execute("inspect_variables", {"names": ["nope"]}, ctx)
    assert not named.ok and "no variable named nope" in named.content


async def test_run_in_kernel_returns_output_result_and_traceback(
        kernel_registry: ToolRegistry, ctx: ToolContext) -> None:
    values: dict[str, Any] = {"n": 2}
    ctx = with_kernel(ctx, values)
    code = "import sys\nprint('out', n)\nprint('err', file=sys.stderr)\nm = n * 21\nm"
    result = await kernel_registry.execute("run_in_kernel", {"code": code}, ctx)
    assert result.ok and result.ran_in_kernel
    assert "stdout:\nout 2" in result.content and "stderr:\nerr" in result.content
    assert "result: int = 42" in result.content
    assert values["m"] == 42  # it ran in the namespace itself

    failed = await kernel_registry.execute(
        "run_in_kernel", {"code": "def f():\n    return 1 / 0\nf()"}, ctx)
    assert not failed.ok and failed.ran_in_kernel
    assert "raised ZeroDivisionError" in failed.content
    assert 'line 2, in f\n    return 1 / 0' in failed.content
    assert failed.content.rstrip().endswith("ZeroDivisionError: division by zero")


async def test_output_is_redacted(kernel_registry: ToolRegistry, ctx: ToolContext) -> None:
    ctx = with_kernel(ctx, {})
    result = await kernel_registry.execute(
        "run_in_kernel", {"code": "print('key: sk-abcdefghijklmnopqrstuvwx')"}, ctx)
    assert "sk-***" in result.content and "abcdefghijkl" not in result.content


async def test_it_refuses_while_another_cell_runs(kernel_registry: ToolRegistry,
                                                  ctx: ToolContext) -> None:
    values: dict[str, Any] = {}
    ctx = replace(ctx, kernel=NamespaceKernel(values, busy=lambda: True))
    result = await kernel_registry.execute("run_in_kernel", {"code": "x = 1"}, ctx)
    assert not result.ok and not result.ran_in_kernel and OTHER_CELL in result.content
    assert "x" not in values


async def test_the_time_limit_interrupts_a_busy_loop(kernel_registry: ToolRegistry,
                                                     ctx: ToolContext) -> None:
    ctx = with_kernel(ctx, {}, kernel_code_timeout_s=0.2)
    result = await kernel_registry.execute("run_in_kernel", {"code": "while True: pass"}, ctx)
    assert not result.ok
    assert result.content.startswith("Stopped at the time limit (0.2 s, kernel_code_timeout_s)")
    assert running_elsewhere() is None


async def test_a_stop_ends_while_true_pass_within_two_seconds(
        kernel_registry: ToolRegistry, ctx: ToolContext) -> None:
    notices: list[str] = []
    ctx = replace(with_kernel(ctx, {}), notice=notices.append)
    code = "try:\n    while True: pass\nexcept:\n    while True: pass"  # a bare except, too
    call = asyncio.ensure_future(kernel_registry.execute("run_in_kernel", {"code": code}, ctx))
    deadline = time.monotonic() + 10
    while running_elsewhere() is None:
        assert time.monotonic() < deadline, "the code never started"
        await asyncio.sleep(0.01)
    asked = time.monotonic()
    call.cancel()
    await asyncio.wait({call}, timeout=5)
    took = time.monotonic() - asked
    assert call.cancelled() and took < 2.0
    assert running_elsewhere() is None and notices == [STOPPED]
    assert stopped_code(ctx.process_scope)  # the banner says it was stopped


async def test_native_code_that_cannot_be_interrupted_is_said(
        kernel_registry: ToolRegistry, ctx: ToolContext) -> None:
    notices: list[str] = []
    ctx = replace(with_kernel(ctx, {}, kernel_stop_grace_s=0.2), notice=notices.append)
    code = "import time\ntime.sleep(1.5)"  # one C call: the stop lands when it returns
    call = asyncio.ensure_future(kernel_registry.execute("run_in_kernel", {"code": code}, ctx))
    deadline = time.monotonic() + 10
    while running_elsewhere() is None:
        assert time.monotonic() < deadline, "the code never started"
        await asyncio.sleep(0.01)
    call.cancel()
    await asyncio.wait({call}, timeout=5)
    assert call.cancelled() and notices == [NOT_INTERRUPTED]
    assert not stopped_code(ctx.process_scope)  # the banner says it runs on, not "stopped"
    refused = await kernel_registry.execute("run_in_kernel", {"code": "1"}, ctx)
    assert not refused.ok and "still running" in refused.content
    while running_elsewhere() is not None:  # it ends once the sleep returns
        assert time.monotonic() < deadline, "the sleeping code never ended"
        await asyncio.sleep(0.02)


def test_displays_are_described() -> None:
    png = base64.b64encode(tiny_png(640, 480)).decode()
    assert png_size(png) == (640, 480)
    assert describe_display({"image/png": png, "text/plain": "<Figure>"}, 80) == \
        "image/png 640×480"
    assert describe_display({"text/plain": "a\n  b"}, 80) == "a b"
    assert describe_display({"image/jpeg": "…"}, 80) == "image/jpeg"
    assert png_size("not a png") is None


async def test_the_namespaces_secrets_are_masked_in_what_the_kernel_tools_return(
        kernel_registry: ToolRegistry, ctx: ToolContext) -> None:
    """``api_key`` shows ``***`` in inspect_variables; printing it, or a value holding it,
    from run_in_kernel must not send it to the model either (nor a key set by the code)."""
    values: dict[str, Any] = {"api_key": "hunter2hunter2",
                              "settings": {"token": "tok-abcdef123"}}
    kernel_ctx = with_kernel(ctx, values)
    ran = await kernel_registry.execute("run_in_kernel", {"code": (
        "db_password = 'pw-0987654321'\n"
        "print(api_key, settings['token'], db_password)\n"
        "{'headers': 'Bearer ' + api_key}")}, kernel_ctx)
    assert ran.ok, ran.content
    for secret in ("hunter2hunter2", "tok-abcdef123", "pw-0987654321"):
        assert secret not in ran.content
    assert "stdout:\n*** *** ***" in ran.content
    headers = {"auth": "Bearer " + values["api_key"]}
    values["headers"] = headers
    shown = await kernel_registry.execute("inspect_variables", {"names": ["headers"]},
                                          kernel_ctx)
    assert "hunter2hunter2" not in shown.content and "Bearer ***" in shown.content
