"""Hostile workspace, reads (issue 18.1): no read without a bound, none through a link.

Links to a FIFO, to ``/dev/zero`` and to a file outside the workspace; 2 GB sparse files
(``os.truncate``: no disk used); a folder swapped for a symlink, given to the tools and the
change summary (the end-of-task read-back and the notebook check: ``test_reads_tasks``). How
much was read is taken from the kernel's own count (``/proc/self/io`` ``rchar``), so a bound
is measured, not assumed.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.registry import ToolRegistry, default_registry
from mercury_nb.workspace.changes import measure_changes
from mercury_nb.workspace.confinement import Workspace
from mercury_nb.workspace.snapshot import take_snapshot

pytestmark = pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs /proc/<pid>/io")

GB2 = 2 * 1024**3
READ_SLACK = 32 * 1024 * 1024
"""Bytes a bounded call may read beyond its budget (imports, config, small files)."""
NOTEBOOK = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def bytes_read() -> int:
    """Bytes this process has read so far (every read(2), sparse holes included)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with an outside folder beside it holding a secret."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("outside secret\n")
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def tool_ctx(workspace: Path) -> ToolContext:
    return ToolContext(root=Workspace(workspace), config=MercuryConfig(workdir=workspace))


@pytest.fixture
def tools() -> ToolRegistry:
    return default_registry()


async def run_tool(registry: ToolRegistry, ctx: ToolContext, name: str,
                   **args: object) -> ToolResult:
    return await asyncio.wait_for(registry.execute(name, json.dumps(args), ctx), timeout=60)


def sparse(path: Path, head: bytes = b"", size: int = GB2) -> Path:
    """A ``size``-byte file of ``head`` then a hole (no disk blocks)."""
    path.write_bytes(head)
    os.truncate(path, size)
    return path


TEXT_HEAD = b"".join(b"line %d of a log\n" % n for n in range(2000))  # 30 KB, no NUL


# --- the tools ---------------------------------------------------------------------------


@pytest.mark.parametrize(("tool", "args", "refusal"), [
    ("edit_file", {"old_text": "a", "new_text": "b"}, "binary file"),
    ("read_notebook", {}, "binary file"),
    ("edit_notebook_cell", {"index": 0, "source": "x"}, "binary file"),
    ("insert_notebook_cell", {"index": 0, "cell_type": "code", "source": "x"}, "binary file"),
])
async def test_a_sparse_2gb_binary_is_refused_from_its_head(
    tools: ToolRegistry, tool_ctx: ToolContext, workspace: Path, tool: str,
    args: dict[str, Any], refusal: str,
) -> None:
    sparse(workspace / "big.ipynb")
    before = bytes_read()
    result = await run_tool(tools, tool_ctx, tool, path="big.ipynb", **args)
    read = bytes_read() - before
    assert not result.ok and refusal in result.content, result.content
    assert read < READ_SLACK, f"{tool} read {read:,} bytes of a 2 GB file to refuse it"
    assert os.path.getsize(workspace / "big.ipynb") == GB2  # untouched


@pytest.mark.parametrize("tool", ["edit_file", "read_notebook", "edit_notebook_cell"])
async def test_a_text_file_over_the_read_budget_is_refused_by_its_size(
    tools: ToolRegistry, tool_ctx: ToolContext, workspace: Path, tool: str
) -> None:
    """A text head hides the hole from a head sniff: only the size can refuse it."""
    sparse(workspace / "log.ipynb", TEXT_HEAD)
    args: dict[str, Any] = {"index": 0, "source": "x"} if tool == "edit_notebook_cell" else {}
    if tool == "edit_file":
        args = {"old_text": "line 1 of a log", "new_text": "changed"}
    before = bytes_read()
    result = await run_tool(tools, tool_ctx, tool, path="log.ipynb", **args)
    read = bytes_read() - before
    assert not result.ok, result.content
    assert "too large to read whole" in result.content
    assert "16,000,000-byte read limit" in result.content
    assert read < READ_SLACK, f"{tool} read {read:,} bytes before refusing"
    assert os.path.getsize(workspace / "log.ipynb") == GB2


async def test_read_file_pages_a_sparse_2gb_text_within_its_scan_budget(
    tools: ToolRegistry, tool_ctx: ToolContext, workspace: Path
) -> None:
    sparse(workspace / "big.log", TEXT_HEAD)
    scan = 256_000_000  # the documented default of MERCURY_READ_FILE_MAX_SCAN_BYTES
    before = bytes_read()
    result = await run_tool(tools, tool_ctx, "read_file", path="big.log")
    read = bytes_read() - before
    assert result.ok, result.content
    assert result.content.startswith("line 0 of a log\n")
    assert read <= scan + READ_SLACK, f"read_file read {read:,} bytes (scan budget {scan:,})"
    assert "more than" in result.content  # the count it could not finish is not claimed


@pytest.mark.parametrize("tool", ["read_file", "edit_file", "read_notebook"])
@pytest.mark.parametrize("target", ["fifo", "dev-zero", "outside"])
async def test_a_link_to_a_fifo_a_device_or_outside_is_refused_at_once(
    tools: ToolRegistry, tool_ctx: ToolContext, workspace: Path, tool: str, target: str
) -> None:
    if target == "fifo":
        os.mkfifo(workspace / "pipe")
    pointed = {"fifo": "pipe", "dev-zero": "/dev/zero",
               "outside": str(workspace.parent / "outside" / "secret.txt")}[target]
    (workspace / "link.ipynb").symlink_to(pointed)
    args: dict[str, Any] = {"old_text": "a", "new_text": "b"} if tool == "edit_file" else {}
    before = bytes_read()
    result = await run_tool(tools, tool_ctx, tool, path="link.ipynb", **args)
    assert not result.ok
    assert "outside secret" not in result.content
    assert bytes_read() - before < READ_SLACK


async def test_list_dir_never_lists_a_folder_swapped_for_a_link_outside(
    tools: ToolRegistry, tool_ctx: ToolContext, workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The folder is checked, then swapped for a symlink to an outside folder before it is
    listed (the race, made deterministic at the point between check and use)."""
    (workspace / "notes").mkdir()
    (workspace / "notes" / "todo.md").write_text("todo\n")
    outside = workspace.parent / "outside"
    checked = Workspace.resolve

    def resolve_then_swap(self: Workspace, path: str, **kwargs: Any) -> Path:
        resolved = checked(self, path, **kwargs)
        if path == "notes":
            (workspace / "notes").rename(workspace / "notes-moved")
            (workspace / "notes").symlink_to(outside, target_is_directory=True)
        return resolved

    monkeypatch.setattr(Workspace, "resolve", resolve_then_swap)
    result = await run_tool(tools, tool_ctx, "list_dir", path="notes")
    assert "secret.txt" not in result.content, result.content
    assert not result.ok
    assert "became a symlink" in result.content


async def test_list_dir_of_a_nested_folder_behind_a_swapped_parent(
    tools: ToolRegistry, tool_ctx: ToolContext, workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (workspace / "a" / "b").mkdir(parents=True)
    (workspace.parent / "outside" / "b").mkdir()
    (workspace.parent / "outside" / "b" / "planted.txt").write_text("x\n")
    checked = Workspace.resolve

    def resolve_then_swap(self: Workspace, path: str, **kwargs: Any) -> Path:
        resolved = checked(self, path, **kwargs)
        (workspace / "a").rename(workspace / "a-moved")
        (workspace / "a").symlink_to(workspace.parent / "outside", target_is_directory=True)
        return resolved

    monkeypatch.setattr(Workspace, "resolve", resolve_then_swap)
    result = await run_tool(tools, tool_ctx, "list_dir", path="a/b")
    assert "planted.txt" not in result.content, result.content
    assert not result.ok


# --- the change summary ------------------------------------------------------------------


def test_the_change_summary_does_not_read_a_sparse_2gb_file(workspace: Path) -> None:
    config = MercuryConfig(workdir=workspace)
    sparse(workspace / "present-at-start.bin")
    before = bytes_read()
    snapshot = take_snapshot(workspace, config)
    sparse(workspace / "created.bin")
    sparse(workspace / "created.log", TEXT_HEAD)
    report = measure_changes(snapshot, workspace)
    read = bytes_read() - before
    assert read < READ_SLACK, f"the change summary read {read:,} bytes"
    assert {c.path: (c.kind, c.size, c.measured) for c in report.changes} == {
        "created.bin": ("created", GB2, False), "created.log": ("created", GB2, False)}


def test_a_file_grown_to_2gb_shows_as_modified_without_being_read(workspace: Path) -> None:
    (workspace / "data.txt").write_text("small\n")
    snapshot = take_snapshot(workspace, MercuryConfig(workdir=workspace))
    sparse(workspace / "data.txt", b"small\n")
    before = bytes_read()
    report = measure_changes(snapshot, workspace)
    assert bytes_read() - before < READ_SLACK
    [change] = report.changes
    assert (change.path, change.kind, change.size) == ("data.txt", "modified", GB2)


def test_the_change_summary_never_follows_links_to_a_fifo_or_device(workspace: Path) -> None:
    snapshot = take_snapshot(workspace, MercuryConfig(workdir=workspace))
    os.mkfifo(workspace / "pipe")
    (workspace / "to-pipe").symlink_to("pipe")
    (workspace / "to-zero").symlink_to("/dev/zero")
    report = measure_changes(snapshot, workspace)  # returns: nothing opened the FIFO
    assert {c.path for c in report.changes} == {"to-pipe", "to-zero"}
