"""Reading what a task asks from its words: the files it names, which must exist, what to
run, and the kind of work (code, tests, a run, or content a read-back can verify)."""

from __future__ import annotations

import pytest

from mercury_nb.contract.gate.task_reading import read_task
from mercury_nb.contract.gate.task_requirements import FileRole, NamedFile

C, T, R, D = "code", "tests", "run", "content"
W, E, M, RD, RN, RM = (
    FileRole.WRITE, FileRole.EDIT, FileRole.MENTION, FileRole.READ, FileRole.RUN, FileRole.REMOVE,
)


@pytest.mark.parametrize(
    ("task", "kinds", "must_exist", "programs", "commands"),
    [
        # the recorded runs of the real small model
        pytest.param("Create hello.py that prints hello world, and run it.",
                     {C, R}, ("hello.py",), ("hello.py",), (), id="r9-hello-run-it"),
        pytest.param("Add a function add(a, b) to calc.py and a pytest test in test_calc.py, "
                     "then make the tests pass.",
                     {C, T, R}, ("calc.py", "test_calc.py"), (), (), id="r10-calc"),
        pytest.param("Run the shell command `sleep 300` in the workspace.",
                     {R}, (), (), ("sleep 300",), id="r14b-backticked-command"),
        pytest.param("Run the shell command: sleep 300", {R}, (), (), ("sleep 300",),
                     id="r14-colon-command"),
        # code and tests
        pytest.param("Create hello.py that prints hello world and run it",
                     {C, R}, ("hello.py",), ("hello.py",), (), id="no-comma-run-it"),
        pytest.param("Write a Python script that prints the first 10 primes",
                     {C}, (), (), (), id="script-no-file"),
        pytest.param("Implement quicksort in sort.py", {C}, ("sort.py",), (), (), id="implement"),
        pytest.param("Fix the bug in app.py", {C}, ("app.py",), (), (), id="fix-edit"),
        pytest.param("Refactor utils.py to remove the globals", {C}, ("utils.py",), (), (),
                     id="refactor"),
        pytest.param("Write tests for calc.py in test_calc.py", {C, T}, ("test_calc.py",), (), (),
                     id="tests-for-reference"),
        pytest.param("Add tests for parse()", {T}, (), (), (), id="tests-no-file"),
        pytest.param("Make the tests pass", {T, R}, (), (), (), id="make-tests-pass"),
        pytest.param("Run the tests", {T, R}, (), (), (), id="run-the-tests"),
        pytest.param("Run hello.py", {C, R}, (), ("hello.py",), (), id="run-file"),
        pytest.param("Run `python hello.py`", {C, R}, (), ("hello.py",), ("python hello.py",),
                     id="run-backticked"),
        pytest.param("Create gen.py that writes out.csv, then run it",
                     {C, R}, ("gen.py",), ("gen.py",), (), id="program-writes-a-file"),
        pytest.param("Write src/app.py and then execute the script",
                     {C, R}, ("src/app.py",), ("src/app.py",), (), id="execute-the-script"),
        pytest.param("Create a notebook analysis.ipynb that loads sales.csv",
                     {C}, ("analysis.ipynb",), (), (), id="notebook-reads-data"),
        pytest.param("Create a config.yaml for the service", {C}, ("config.yaml",), (), (),
                     id="config-is-code"),
        pytest.param("Write a node.js server in server.js", {C}, ("server.js",), (), (),
                     id="technology-name-is-no-file"),
        # content a read-back can verify
        pytest.param("Write a summary of the project in NOTES.md", {D}, ("NOTES.md",), (), (),
                     id="notes"),
        pytest.param("Create notes/todo.md with a list of tasks", {D}, ("notes/todo.md",), (), (),
                     id="nested-notes"),
        pytest.param("Write the first 10 primes to primes.txt", {D}, ("primes.txt",), (), (),
                     id="data-file"),
        pytest.param("Fix the typo in README.md", {D}, ("README.md",), (), (), id="typo-in-docs"),
        pytest.param("Document the functions of utils.py in docs/api.md", {D}, ("docs/api.md",),
                     (), (), id="document-code-in-docs"),
        pytest.param("Summarise README.md in SUMMARY.md", {D}, ("SUMMARY.md",), (), (),
                     id="summarise-into-a-file-writes-it"),
        pytest.param("Write a poem about autumn", {D}, (), (), (), id="content-noun"),
        pytest.param("Clean up data/sales.csv and drop empty rows", {D}, ("data/sales.csv",), (),
                     (), id="clean-data"),
        pytest.param("Update the changelog", {D}, (), (), (), id="changelog"),
        pytest.param("write two files", {D}, (), (), (), id="files-of-content"),
        pytest.param("Create a python file that prints hi", {C}, (), (), (), id="python-file"),
        # removal, moves, conversions
        pytest.param("Delete old.py", {C}, (), (), (), id="delete"),
        pytest.param("Remove old.txt", {D}, (), (), (), id="remove-prose"),
        pytest.param("Rename a.py to b.py", {C}, ("b.py",), (), (), id="rename"),
        pytest.param("Move notes.txt into docs/notes.txt", {D}, ("docs/notes.txt",), (), (),
                     id="move"),
        pytest.param("Convert data.csv to data.json", {C}, ("data.json",), (), (),
                     id="convert"),
        pytest.param("Remove the debug prints from app.py", {C}, ("app.py",), (), (),
                     id="remove-from-file-is-an-edit"),
        # questions and reading: files only read, nothing must exist
        pytest.param("What does main.py do?", {C}, (), (), (), id="question-mentions"),
        pytest.param("Explain calc.py", set(), (), (), (), id="explain"),
        pytest.param("Read config.yaml and tell me the port", set(), (), (), (), id="read"),
        pytest.param("Was hello.py created?", {C}, (), (), (), id="question-about-a-file"),
        pytest.param("How do I run hello.py?", {C}, (), (), (),
                     id="question-about-running"),
        pytest.param("Make me a workout plan based on the latest research", {D}, (), (), (),
                     id="chat-like"),
    ],
)
def test_reading(
    task: str,
    kinds: set[str],
    must_exist: tuple[str, ...],
    programs: tuple[str, ...],
    commands: tuple[str, ...],
) -> None:
    asked = read_task(task)
    assert set(asked.kinds) == kinds
    assert asked.must_exist == must_exist
    assert asked.runs.programs == programs
    assert asked.runs.commands == commands


@pytest.mark.parametrize(
    ("task", "files"),
    [
        pytest.param("Rename a.py to b.py", (NamedFile("a.py", RM), NamedFile("b.py", W)),
                     id="rename"),
        pytest.param("Summarise main.py in NOTES.md",
                     (NamedFile("main.py", RD), NamedFile("NOTES.md", W)), id="summarise"),
        pytest.param("Create a script plot.py that reads data.csv",
                     (NamedFile("plot.py", W), NamedFile("data.csv", RD)), id="described-read"),
        pytest.param("Update ./docs\\guide.md", (NamedFile("docs/guide.md", E),),
                     id="normalized"),
        pytest.param("See https://example.com/index.html and write notes.md",
                     (NamedFile("notes.md", W),), id="url-is-no-file"),
        pytest.param("Write `report.md`", (NamedFile("report.md", W),), id="backticked-file"),
        pytest.param("hello.py: print hello", (NamedFile("hello.py", M),), id="no-verb"),
        pytest.param("Run main.py", (NamedFile("main.py", RN),), id="run"),
    ],
)
def test_roles(task: str, files: tuple[NamedFile, ...]) -> None:
    assert read_task(task).files == files


def test_chat_mode_asks_no_file_to_exist() -> None:
    assert read_task("Create hello.py", "execute").must_exist == ("hello.py",)
    assert read_task("Create hello.py", "chat").must_exist == ()
