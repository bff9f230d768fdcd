"""Whether a read-back of the changed files answers what the task asks: content it asks for,
where it said; and which paths are tests."""

from __future__ import annotations

import pytest

from mercury_nb.contract.gate.task_reading import read_task
from mercury_nb.contract.gate.task_requirements import NOTHING_ASKED, is_test_path


@pytest.mark.parametrize(
    ("task", "changed", "verifies"),
    [
        pytest.param("Write a summary of the project in NOTES.md", ("NOTES.md",), True,
                     id="notes-where-said"),
        pytest.param("Write a summary of the project in NOTES.md", ("NOTES.md", "scratch.txt"),
                     False, id="notes-and-elsewhere"),
        pytest.param("Write a summary of the project in NOTES.md", ("other.md",), False,
                     id="notes-elsewhere"),
        pytest.param("Write a poem about autumn", ("poem.md",), True, id="no-file-named"),
        pytest.param("Create hello.py that prints hello world, and run it.", ("file.txt",),
                     False, id="r9-junk-text-file"),
        pytest.param("Run the shell command `sleep 300` in the workspace.",
                     ("workspace/workspace/workspace.csv.csv",), False, id="r14b-junk-csv"),
        pytest.param("What is in the data?", ("junk.txt",), False, id="question-asks-no-content"),
        pytest.param("Update README.md and add the tests in test_a.py", ("README.md",), False,
                     id="content-and-tests"),
        pytest.param("Write notes in notes.md", ("notes.py",), False, id="code-file"),
        pytest.param("Write notes in /work/ws/notes.md", ("notes.md",), True, id="absolute-path"),
        pytest.param("Remove old.txt", ("old.txt",), True, id="removed-prose"),
        pytest.param("Write the parts files part0.txt to part3.txt",
                     ("part0.txt", "part1.txt", "part2.txt", "part3.txt"), True,
                     id="numbered-series"),
        pytest.param("Write the parts files part0.txt to part3.txt", ("part1.md",), False,
                     id="series-keeps-its-suffix"),
        pytest.param("Write notes in notes.md", ("notes2.md",), False, id="no-series-no-digit"),
    ],
)
def test_read_back_verifies(task: str, changed: tuple[str, ...], verifies: bool) -> None:
    assert read_task(task).read_back_verifies(changed) is verifies


@pytest.mark.parametrize(
    ("task", "changed", "deleted", "verifies"),
    [
        # artifact nouns are places, matched loosely
        pytest.param("Write a README for this project", ("file.txt",), (), False,
                     id="readme-junk-file"),
        pytest.param("Write a README for this project", ("README.md",), (), True, id="readme"),
        pytest.param("Write a README for this project", ("docs/README.rst",), (), True,
                     id="readme-any-folder-any-suffix"),
        pytest.param("Add a changelog entry for 1.2", ("file.txt",), (), False,
                     id="changelog-junk-file"),
        pytest.param("Add a changelog entry for 1.2", ("CHANGELOG.md",), (), True,
                     id="changelog"),
        pytest.param("Update the docs with install steps", ("docs/install.md",), (), True,
                     id="docs-folder"),
        pytest.param("Update the docs with install steps", ("notes.md",), (), False,
                     id="docs-elsewhere"),
        pytest.param("Write release notes in CHANGELOG", ("CHANGELOG",), (), True,
                     id="suffix-less-changelog"),
        pytest.param("Jot down notes from the meeting", ("NOTES.md",), (), True, id="notes"),
        pytest.param("Jot down notes from the meeting", ("docs/release-notes.md",), (), True,
                     id="notes-a-word-of-the-name"),
        pytest.param("Jot down notes from the meeting", ("minutes.md",), (), False,
                     id="notes-elsewhere-loose"),
        # a deletion verifies only when the task asks to remove that file
        pytest.param("Update the docs with install steps", ("docs/index.md",),
                     ("docs/index.md",), False, id="docs-deleted"),
        pytest.param("Write a poem about autumn", ("autumn.md",), ("autumn.md",), False,
                     id="deleted-unasked"),
        pytest.param("Remove old.txt", ("old.txt",), ("old.txt",), True, id="removal-asked"),
        pytest.param("Remove old.txt", ("old.txt", "other.txt"), ("old.txt", "other.txt"),
                     False, id="removal-of-another"),
        # no place named: the changed file relates to the task's words
        pytest.param("Write a poem about autumn", ("file.txt",), (), False, id="unrelated"),
        pytest.param("Write a haiku about cats", ("cats.md",), (), True, id="topic-in-name"),
        pytest.param("Generate a CSV of the first 10 primes", ("out.csv",), (), True,
                     id="format-named"),
        pytest.param("Write a short story in markdown", ("tale.md",), (), True,
                     id="format-word"),
        pytest.param("Edit both files", ("first.txt", "later.txt"), (), True,
                     id="a-bare-file-noun"),
        pytest.param("Write a README file for this project", ("file.txt",), (), False,
                     id="the-artifact-wins-over-file"),
    ],
)
def test_read_back_of_content(
    task: str, changed: tuple[str, ...], deleted: tuple[str, ...], verifies: bool
) -> None:
    assert read_task(task).read_back_verifies(changed, deleted) is verifies


@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("test_calc.py", True), ("calc_test.go", True), ("src/app.test.ts", True),
        ("tests/helpers.py", True), ("calc.py", False), ("latest.py", False),
        ("contest_entry.md", False),
    ],
)
def test_test_paths(path: str, test: bool) -> None:
    assert is_test_path(path) is test


def test_the_empty_reading_verifies_nothing_by_read_back() -> None:
    assert NOTHING_ASKED.read_back_verifies(("README.md",)) is False
    assert NOTHING_ASKED.needs_check is False
