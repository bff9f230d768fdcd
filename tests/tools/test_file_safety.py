"""read_file's paging and refusals, odd file names, and the symlink-swap race (issue 11.3)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from mercury_nb.tools.base import ToolContext, ToolError, ToolResult
from mercury_nb.tools.files import ContentArgs, write_file
from mercury_nb.tools.registry import ToolRegistry
from mercury_nb.workspace.errors import WorkspaceError


async def call(registry: ToolRegistry, ctx: ToolContext, name: str, **args: object) -> ToolResult:
    return await asyncio.wait_for(registry.execute(name, json.dumps(args), ctx), timeout=20)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays


def _device(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # like /dev/zero
    except PermissionError:
        pytest.skip("creating a device node needs privileges")


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        pytest.param(_fifo, "FIFO (named pipe)", id="fifo"),
        pytest.param(_socket, "socket", id="socket"),
        pytest.param(_device, "device", id="device"),
    ],
)
async def test_read_file_refuses_non_regular_files_at_once(
    registry: ToolRegistry, ctx: ToolContext, root: Path, make: object, kind: str
) -> None:
    make(root / "odd")  # type: ignore[operator]
    result = await call(registry, ctx, "read_file", path="odd")
    assert not result.ok
    assert f"odd is a {kind}, not a regular file" in result.content


def _numbered(root: Path, count: int) -> Path:
    path = root / "lines.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, count + 1)))
    return path


async def test_offset_and_limit_are_lines(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    _numbered(root, 1000)
    content = (await call(registry, ctx, "read_file", path="lines.txt", offset=5,
                          limit=3)).content
    assert content.splitlines()[:3] == ["line 5", "line 6", "line 7"]
    assert "[lines 5-7 of 1,000 shown (limit=3)" in content
    assert "offset=8" in content


async def test_a_cut_page_says_how_to_read_on_and_the_next_page_follows(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    _numbered(root, 5000)  # about 49 KB
    small = ToolContext(root=ctx.root, config=ctx.config.with_changes(read_file_max_chars=1000))
    first = (await call(registry, small, "read_file", path="lines.txt")).content
    body, note = first.rsplit("\n", 1)
    assert len(body) <= 1000
    shown = body.splitlines()
    assert shown[0] == "line 1"
    following = len(shown) + 1
    assert note == (f"[lines 1-{len(shown)} of 5,000 shown (cut to fit the 1,000-character "
                    f"budget). Read on with read_file(path='lines.txt', offset={following}, "
                    "limit=...)]")
    second = (await call(registry, small, "read_file", path="lines.txt",
                         offset=following)).content
    assert second.splitlines()[0] == f"line {following}"


async def test_a_huge_file_is_streamed_within_a_small_memory_budget(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    line = b"x" * 99 + b"\n"
    with (root / "huge.log").open("wb") as handle:
        block = line * 10_000  # 1 MB
        for _ in range(64):
            handle.write(block)
    tracemalloc.start()
    try:
        result = await call(registry, ctx, "read_file", path="huge.log")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.ok
    assert "of 640,000 shown" in result.content
    assert len(result.content) < ctx.config.read_file_max_chars + 500
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MB for a 64 MB file"


async def test_binary_files_are_described_not_dumped(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    result = await call(registry, ctx, "read_file", path="logo.png")
    assert result.ok
    assert result.content.startswith("logo.png is a binary file (")
    assert "PNG image" in result.content
    assert "IHDR" not in result.content


async def test_a_non_utf8_name_never_breaks_list_dir(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    (root / os.fsdecode(b"bad\xffname.txt")).write_text("x\n")
    (root / "good.txt").write_text("y\n")
    from mercury_nb.agent.tool_runner import clean_result

    result = clean_result(await call(registry, ctx, "list_dir"), ctx)
    assert result.ok
    assert result.content == "file: bad\\xffname.txt\nfile: good.txt"
    result.content.encode("utf-8")
    # the name as shown can be used
    read = clean_result(await call(registry, ctx, "read_file", path="bad\\xffname.txt"), ctx)
    assert (read.ok, read.content) == (True, "x\n")


@pytest.mark.parametrize("length", [242, 250, 255])
async def test_names_up_to_255_bytes_can_be_written(
    registry: ToolRegistry, ctx: ToolContext, root: Path, length: int
) -> None:
    name = "n" * (length - 3) + ".md"
    result = await call(registry, ctx, "write_file", path=name, content="long name\n")
    assert result.ok, result.content
    assert (root / name).read_text() == "long name\n"
    assert sorted(p.name for p in root.iterdir()) == [name]  # no temp file left
    edited = await call(registry, ctx, "edit_file", path=name, old_text="long",
                        new_text="longest")
    assert edited.ok, edited.content


_SWAPPER = """
import ctypes, os, sys
sub, link, stop = (os.fsencode(a) for a in sys.argv[1:4])
libc = ctypes.CDLL(None, use_errno=True)
while not os.path.exists(stop):
    # atomically exchange the real folder and a symlink to the outside (RENAME_EXCHANGE)
    libc.renameat2(-100, sub, -100, link, 2)
"""


def _can_exchange() -> bool:
    try:
        import ctypes

        return hasattr(ctypes.CDLL(None), "renameat2")
    except OSError:
        return False


@pytest.mark.skipif(not _can_exchange(), reason="needs Linux renameat2(RENAME_EXCHANGE)")
def test_a_concurrent_symlink_swap_never_gets_a_write_outside(
    ctx: ToolContext, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not what is tested
    outside = root.parent / "outside"
    sub, link, stop = root / "sub", root / ".swap", tmp_path / "stop"
    sub.mkdir()
    os.symlink(outside, link)
    swapper = subprocess.Popen(  # another process: real concurrency, no shared GIL
        [sys.executable, "-c", _SWAPPER, str(sub), str(link), str(stop)]
    )
    written = refused = 0
    try:
        for i in range(3000):
            try:
                write_file(ContentArgs(path=f"sub/f{i}.txt", content="x\n"), ctx)
                written += 1
            except (ToolError, WorkspaceError, OSError):
                refused += 1
    finally:
        stop.touch()
        swapper.wait(timeout=10)
    escaped = sorted(p.name for p in outside.iterdir() if p.name != "secret.txt")
    assert escaped == [], f"{len(escaped)} of 3000 writes landed outside the workspace"
    assert written > 0 and written + refused == 3000
