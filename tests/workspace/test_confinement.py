"""Workspace.resolve refuses every way out of the root and accepts every way inside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mercury_nb.workspace.confinement import Workspace
from mercury_nb.workspace.errors import WorkspaceError


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n")
    inside = tmp_path / "ws"
    (inside / "sub").mkdir(parents=True)
    (inside / "sub" / "a.txt").write_text("a\n")
    os.symlink(tmp_path / "outside", inside / "out_dir")
    os.symlink(tmp_path / "outside" / "secret.txt", inside / "out_file")
    os.symlink(tmp_path / "outside" / "not-yet.txt", inside / "dangling_out")
    os.symlink(inside / "sub" / "a.txt", inside / "in_link")
    return inside


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("../x", id="dotdot"),
        pytest.param("sub/../../x", id="dotdot-after-folder"),
        pytest.param("../ws/../outside/secret.txt", id="dotdot-round-trip"),
        pytest.param("/etc/passwd", id="absolute-outside"),
        pytest.param("~/x", id="home-relative"),
        pytest.param("out_dir/secret.txt", id="symlinked-folder-escape"),
        pytest.param("out_file", id="symlinked-file-escape"),
        pytest.param("dangling_out", id="dangling-symlink-escape"),
        pytest.param("out_dir", id="symlink-itself-escapes"),
    ],
)
def test_escapes_are_refused_with_a_clear_message(root: Path, path: str) -> None:
    with pytest.raises(WorkspaceError, match=r"^path escapes the workspace: "):
        Workspace(root).resolve(path)


def test_absolute_outside_path_names_the_path(root: Path) -> None:
    with pytest.raises(WorkspaceError) as caught:
        Workspace(root).resolve("/etc/passwd")
    assert str(caught.value) == "path escapes the workspace: /etc/passwd"


def test_symlink_escape_says_a_symlink_is_the_way_out(root: Path) -> None:
    with pytest.raises(WorkspaceError, match="symlink"):
        Workspace(root).resolve("out_dir/secret.txt")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("new.txt", "new.txt", id="new-file"),
        pytest.param("./sub/a.txt", "sub/a.txt", id="dot-prefix"),
        pytest.param("sub/../new.txt", "new.txt", id="dotdot-staying-inside"),
        pytest.param("deep/new/folder/f.txt", "deep/new/folder/f.txt", id="missing-folders"),
        pytest.param(".", ".", id="root-itself"),
        pytest.param("in_link", "sub/a.txt", id="symlink-inside-is-followed"),
    ],
)
def test_paths_inside_are_accepted(root: Path, path: str, expected: str) -> None:
    workspace = Workspace(root)
    resolved = workspace.resolve(path)
    assert workspace.rel(resolved) == expected
    assert resolved.is_absolute()


def test_absolute_path_inside_is_accepted(root: Path) -> None:
    workspace = Workspace(root)
    assert workspace.resolve(str(root / "sub" / "a.txt")) == root / "sub" / "a.txt"


def test_root_given_through_a_symlink_still_confines(tmp_path: Path, root: Path) -> None:
    alias = tmp_path / "alias"
    os.symlink(root, alias)
    workspace = Workspace(alias)
    assert workspace.resolve(str(alias / "sub" / "a.txt")) == root / "sub" / "a.txt"
    with pytest.raises(WorkspaceError, match="escapes"):
        workspace.resolve(str(alias / ".." / "outside" / "secret.txt"))


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("", id="empty"),
        pytest.param("   ", id="blank"),
        pytest.param("a\x00b", id="nul"),
    ],
)
def test_unusable_paths_are_refused(root: Path, path: str) -> None:
    with pytest.raises(WorkspaceError):
        Workspace(root).resolve(path)


def test_final_symlink_can_be_kept_unresolved(root: Path) -> None:
    workspace = Workspace(root)
    assert workspace.resolve("in_link", follow_final_symlink=False) == root / "in_link"
    with pytest.raises(WorkspaceError, match="escapes"):
        workspace.resolve("out_dir/secret.txt", follow_final_symlink=False)


def test_symlink_loop_is_a_tool_error(root: Path) -> None:
    os.symlink(root / "loop_b", root / "loop_a")
    os.symlink(root / "loop_a", root / "loop_b")
    with pytest.raises(WorkspaceError):
        Workspace(root).resolve("loop_a/x")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param("sub/a.txt", "sub/a.txt", id="relative"),
        pytest.param("", ".", id="root-empty"),
        pytest.param("sub", "sub", id="folder"),
    ],
)
def test_rel_is_posix_and_relative(root: Path, given: str, expected: str) -> None:
    workspace = Workspace(root)
    assert workspace.rel(root / given) == expected
