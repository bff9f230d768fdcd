"""File tools through the registry: results, errors the model can act on, and confinement."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.registry import ToolRegistry


async def call(registry: ToolRegistry, ctx: ToolContext, name: str, **args: object) -> ToolResult:
    return await registry.execute(name, json.dumps(args), ctx)


# --- confinement, for every tool that takes a path --------------------------------------

PATH_CALLS = [
    pytest.param("list_dir", {}, id="list_dir"),
    pytest.param("read_file", {}, id="read_file"),
    pytest.param("create_file", {"content": "pwned\n"}, id="create_file"),
    pytest.param("write_file", {"content": "pwned\n"}, id="write_file"),
    pytest.param("edit_file", {"old_text": "secret", "new_text": "pwned"}, id="edit_file"),
    pytest.param("delete_file", {}, id="delete_file"),
]
ESCAPES = [
    pytest.param("../outside/secret.txt", id="dotdot"),
    pytest.param("/etc/passwd", id="absolute"),
    pytest.param("link/secret.txt", id="symlink"),
]


@pytest.mark.parametrize("escape", ESCAPES)
@pytest.mark.parametrize(("name", "extra"), PATH_CALLS)
async def test_escaping_paths_come_back_as_tool_errors(
    registry: ToolRegistry,
    ctx: ToolContext,
    root: Path,
    name: str,
    extra: dict[str, str],
    escape: str,
) -> None:
    os.symlink(root.parent / "outside", root / "link")
    result = await call(registry, ctx, name, path=escape, **extra)
    assert not result.ok
    assert result.content.startswith("Error: path escapes the workspace: ")
    assert result.changed_paths == ()
    assert (root.parent / "outside" / "secret.txt").read_text() == "secret\n"


# --- list_dir ---------------------------------------------------------------------------


async def test_list_dir_is_sorted_with_kinds(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    (root / "b.txt").write_text("b")
    (root / "a_dir").mkdir()
    (root / "c.py").write_text("c")
    result = await call(registry, ctx, "list_dir")
    assert result == ToolResult(ok=True, content="dir: a_dir\nfile: b.txt\nfile: c.py")


async def test_list_dir_caps_entries(registry: ToolRegistry, root: Path, ctx: ToolContext) -> None:
    for i in range(15):
        (root / f"f{i:02}").write_text("")
    capped = ToolContext(root=ctx.root, config=ctx.config.with_changes(list_dir_max_entries=10))
    lines = (await call(registry, capped, "list_dir", path=".")).content.splitlines()
    assert lines[:10] == [f"file: f{i:02}" for i in range(10)]
    assert lines[10:] == ["[… 5 more entries not shown]"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        pytest.param("missing", "Error: no such directory: missing", id="missing"),
        pytest.param("f.txt", "Error: not a directory: f.txt", id="file"),
    ],
)
async def test_list_dir_errors(
    registry: ToolRegistry, ctx: ToolContext, root: Path, path: str, message: str
) -> None:
    (root / "f.txt").write_text("x")
    result = await call(registry, ctx, "list_dir", path=path)
    assert not result.ok
    assert result.content.startswith(message)


# --- read_file --------------------------------------------------------------------------


async def test_read_file_returns_the_text(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    (root / "notes.md").write_text("# Notes\nline\n")
    assert await call(registry, ctx, "read_file", path="notes.md") == ToolResult(
        ok=True, content="# Notes\nline\n", read_paths=("notes.md",)
    )


async def test_read_file_caps_as_head_and_tail(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    (root / "big.txt").write_text("H" * 600 + "M" * 3000 + "T" * 600)
    capped = ToolContext(root=ctx.root, config=ctx.config.with_changes(read_file_max_chars=1000))
    content = (await call(registry, capped, "read_file", path="big.txt")).content
    head, marker, tail = content.split("\n")[:3]
    assert head == "H" * 500
    assert marker == "[… 3200 characters omitted …]"
    assert tail == "T" * 500


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        pytest.param(lambda p: p.write_bytes(b"caf\xe9"), "is not UTF-8 text", id="latin1"),
        pytest.param(lambda p: p.mkdir(), "is a directory", id="folder"),
        pytest.param(lambda p: None, "no such file", id="missing"),
    ],
)
async def test_read_file_refuses_politely(
    registry: ToolRegistry, ctx: ToolContext, root: Path, setup: object, message: str
) -> None:
    setup(root / "thing")  # type: ignore[operator]
    result = await call(registry, ctx, "read_file", path="thing")
    assert not result.ok
    assert message in result.content


# --- create_file / write_file -----------------------------------------------------------


async def test_create_file_makes_parents(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    result = await call(
        registry, ctx, "create_file", path="pkg/sub/mod.py", content="x = 1\ny = 2\n"
    )
    assert result == ToolResult(
        ok=True, content="created pkg/sub/mod.py (2 lines)", changed_paths=("pkg/sub/mod.py",)
    )
    assert (root / "pkg/sub/mod.py").read_text() == "x = 1\ny = 2\n"


async def test_create_file_fails_when_the_file_exists(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    (root / "keep.txt").write_text("original\n")
    result = await call(registry, ctx, "create_file", path="keep.txt", content="replaced\n")
    assert not result.ok
    assert "already exists" in result.content
    assert result.changed_paths == ()
    assert (root / "keep.txt").read_text() == "original\n"


@pytest.mark.parametrize(
    ("existing", "verb"),
    [pytest.param("old\n", "overwrote", id="overwrite"), pytest.param(None, "created", id="new")],
)
async def test_write_file(
    registry: ToolRegistry, ctx: ToolContext, root: Path, existing: str | None, verb: str
) -> None:
    if existing is not None:
        (root / "out").mkdir()
        (root / "out" / "f.txt").write_text(existing)
    result = await call(registry, ctx, "write_file", path="out/f.txt", content="new\n")
    assert result == ToolResult(
        ok=True, content=f"{verb} out/f.txt (1 line)", changed_paths=("out/f.txt",)
    )
    assert (root / "out" / "f.txt").read_text() == "new\n"


# --- edit_file --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "old_text", "new_text", "after", "error"),
    [
        pytest.param("a = 1\nb = 2\n", "b = 2", "b = 3", "a = 1\nb = 3\n", None, id="exactly-once"),
        pytest.param("x\n", "", "y\n", "x\ny\n", None, id="empty-old-text-appends"),
        pytest.param("", "", "first\n", "first\n", None, id="append-to-empty"),
        pytest.param("a\nb\n", "c", "d", "a\nb\n", "old_text was not found", id="missing"),
        pytest.param("v\nv\n", "v", "w", "v\nv\n", "old_text occurs 2 times", id="twice"),
        pytest.param("aaa", "aa", "b", "aaa", "old_text occurs 2 times", id="overlapping"),
        pytest.param("p\r\nq\r\n", "p\nq", "P\nQ", "P\r\nQ\r\n", None, id="crlf-file"),
    ],
)
async def test_edit_file_rules(
    registry: ToolRegistry,
    ctx: ToolContext,
    root: Path,
    before: str,
    old_text: str,
    new_text: str,
    after: str,
    error: str | None,
) -> None:
    (root / "f.txt").write_bytes(before.encode())
    result = await call(
        registry, ctx, "edit_file", path="f.txt", old_text=old_text, new_text=new_text
    )
    assert (root / "f.txt").read_bytes() == after.encode()
    if error is None:
        assert result.ok, result.content
        assert result.changed_paths == ("f.txt",)
    else:
        assert not result.ok
        assert error in result.content
        assert result.changed_paths == ()


async def test_edit_file_requires_an_existing_file(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    result = await call(registry, ctx, "edit_file", path="nope.txt", old_text="", new_text="x")
    assert not result.ok
    assert "no such file: nope.txt" in result.content
    assert not (root / "nope.txt").exists()


async def test_append_without_final_newline_says_so(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    (root / "f.txt").write_text("abc")
    result = await call(registry, ctx, "edit_file", path="f.txt", old_text="", new_text="def")
    assert (root / "f.txt").read_text() == "abcdef"
    assert "did not end with a newline" in result.content


# --- delete_file ------------------------------------------------------------------------


async def test_delete_file(registry: ToolRegistry, ctx: ToolContext, root: Path) -> None:
    (root / "gone.txt").write_text("x")
    result = await call(registry, ctx, "delete_file", path="gone.txt")
    assert result == ToolResult(ok=True, content="deleted gone.txt", changed_paths=("gone.txt",))
    assert not (root / "gone.txt").exists()


async def test_delete_file_removes_a_link_not_its_target(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    (root / "target.txt").write_text("kept")
    os.symlink(root / "target.txt", root / "alias.txt")
    result = await call(registry, ctx, "delete_file", path="alias.txt")
    assert result.ok
    assert not (root / "alias.txt").is_symlink()
    assert (root / "target.txt").read_text() == "kept"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        pytest.param("missing.txt", "no such file", id="missing"),
        pytest.param("folder", "is a directory", id="folder"),
        pytest.param(".", "is a directory", id="root"),
    ],
)
async def test_delete_file_errors(
    registry: ToolRegistry, ctx: ToolContext, root: Path, path: str, message: str
) -> None:
    (root / "folder").mkdir()
    result = await call(registry, ctx, "delete_file", path=path)
    assert not result.ok
    assert message in result.content
    assert (root / "folder").is_dir()
