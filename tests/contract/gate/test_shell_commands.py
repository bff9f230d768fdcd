"""A task that is only a command line asks to run exactly that command."""

from __future__ import annotations

import pytest

from mercury_nb.contract.gate.shell_commands import bare_command, opens_with_shell_command
from mercury_nb.contract.gate.task_reading import read_task


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("ls -la", True),
        ("pwd", True),
        ("$ grep -rn TODO .", True),
        ("`rm build.log`", True),
        ("tail -n 50 server.log", True),
        ("sleep 300", True),
        ("cat notes.txt", True),
        ("tail the log", False),  # an English word with no argument: prose
        ("sleep on it", False),
        ("cat", False),
        ("Summarise README.md", False),
        ("", False),
    ],
)
def test_opens_with_shell_command(sentence: str, expected: bool) -> None:
    assert opens_with_shell_command(sentence) is expected


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("tail -n 50 server.log", "tail -n 50 server.log"),
        ("ls -la", "ls -la"),
        ("$ ls -la", "ls -la"),
        ("`du -sh data/`", "du -sh data/"),
        ("  sleep 300  ", "sleep 300"),
        ("cat notes.txt.", "cat notes.txt"),  # the sentence's full stop
        ("grep -rn TODO .", "grep -rn TODO ."),  # an argument, kept
        ("ls && pwd", "ls && pwd"),
        ("tail the log", None),
        ("sleep 300 and tell me when it ends", None),  # prose after the command
        ("ls. Then summarise the files.", None),
        ("ls -la\ngrep foo bar.txt", None),  # several lines: read word by word
        ("Run the shell command: sleep 300", None),  # read by the task reader's colon rule
        ("Create hello.py and run it.", None),
        ("", None),
    ],
)
def test_bare_command(task: str, expected: str | None) -> None:
    assert bare_command(task) == expected


@pytest.mark.parametrize(
    ("task", "commands", "programs"),
    [
        ("tail -n 50 server.log", ("tail -n 50 server.log",), ()),
        ("mv a.py b.py", ("mv a.py b.py",), ()),  # arguments, not programs to run
        ("Run the shell command: sleep 300", ("sleep 300",), ()),
        ("tail the log", (), ()),
    ],
)
def test_a_command_line_task_requests_exactly_its_command(
    task: str, commands: tuple[str, ...], programs: tuple[str, ...]
) -> None:
    requirements = read_task(task)
    assert requirements.runs.commands == commands
    assert requirements.runs.programs == programs
    assert requirements.must_exist == ()  # the files on the line are its arguments
