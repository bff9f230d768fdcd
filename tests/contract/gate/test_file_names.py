"""The one file-name reader: which words of prose are file names (table-tested)."""

from __future__ import annotations

import pytest

from mercury_nb.contract.answer_grounding import named_paths
from mercury_nb.contract.gate.file_names import EXTENSIONS, file_names, is_file_name
from mercury_nb.contract.gate.task_intent import work_signals
from mercury_nb.contract.gate.task_reading import read_task


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Write notes.rst with three ideas", ("notes.rst",)),
        ("Create main.zig that prints hi", ("main.zig",)),
        ("Save the table as results.xlsx.", ("results.xlsx",)),
        ("Write a poem to poem.org", ("poem.org",)),
        ("ideas.adoc, minutes.tex and index.mdx", ("ideas.adoc", "minutes.tex", "index.mdx")),
        ("Put it in src/pkg/mod.py and ./notes.txt", ("src/pkg/mod.py", "./notes.txt")),
        ("Read ~/data/x.csv", ("~/data/x.csv",)),
        ("Summarize README.md into SUMMARY.md", ("README.md", "SUMMARY.md")),
        ("Edit `hello world.py`", ("hello world.py",)),
        # not file names
        ("Bump the version to 1.2 (or v3.11, python3.11)", ()),
        ("Is example.com down? Try github.io or www.python.org", ()),
        ("Use a list, e.g. a queue, i.e. FIFO", ()),
        ("Finish the sentence.Then stop", ()),
        ("`ls -la`", ()),
    ],
)
def test_file_names(text: str, names: tuple[str, ...]) -> None:
    assert file_names(text) == names


@pytest.mark.parametrize("ext", ["rst", "adoc", "org", "zig", "xlsx", "tex", "mdx", "py", "md"])
def test_the_extension_table_is_broad(ext: str) -> None:
    assert ext in EXTENSIONS and is_file_name(f"a.{ext}")


@pytest.mark.parametrize("name", ["notes.rst", "main.zig", "results.xlsx", "poem.org"])
def test_intent_reading_and_grounding_read_the_same_names(name: str) -> None:
    task = f"Write {name} now"
    assert name in work_signals(task)
    assert name in read_task(task).must_exist
    assert named_paths(f"What is in {name}?") == (name,)
