"""Scripted models the panel's tests play, in-process (handler tests) or in a jupyter lab
process (browser tests load this module from a ``--config`` file)."""

from __future__ import annotations

import os
import shlex
import sys
import tempfile

from mercury_nb.testing import Stall, Turn, call, register_scripted_model

XSS = "<img src=x onerror=window.__pwned=1><script>window.__pwned=2</script>"
XSS_FILE = "<img src=x onerror=window.__pwned=1>.txt"


def check_command(test_file: str) -> str:
    return f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider {test_file}"


def verified(test_file: str = "test_ok.py") -> list[Turn]:
    """Create a passing test, run it, say so: ends ``✓ Task complete``."""
    return [
        Turn(tool_calls=(call("create_file", path=test_file,
                              content="def test_ok():\n    assert True\n"),)),
        Turn(tool_calls=(call("run_command", command=check_command(test_file)),)),
        Turn(text=f"Created {test_file} and it passes."),
    ]


def slow() -> list[Turn]:
    """Writes one file, then the model goes silent for a minute (until stopped)."""
    return [
        Turn(tool_calls=(call("create_file", path="started.md", content="# begun\n"),)),
        Turn(text="Still thinking about it.", fault=Stall(seconds=60)),
    ]


def pausing() -> list[Turn]:
    """With ``max_steps=1`` and no automatic continuations: pauses after one step; after
    "continue" it finishes a prose change in one more step (evidence: the read-back)."""
    return [
        Turn(tool_calls=(call("create_file", path="NOTES.md", content="# Notes\n\n- one\n"),)),
        Turn(text="NOTES.md lists the item."),
    ]


def hostile() -> list[Turn]:
    """Markup everywhere: a file name, its content, a command and the answer."""
    return [
        Turn(tool_calls=(call("create_file", path=XSS_FILE, content=XSS + "\n"),)),
        Turn(tool_calls=(call("run_command", command=f"echo {shlex.quote(XSS)}"),)),
        Turn(text=f"Done {XSS}"),
    ]


FORGED = "✓ Verified: python -m pytest -q → exit 0 ✓"
FORGED_NAMES = ("x\n" + FORGED, "y\r" + FORGED, "z\x1b[2K\r" + FORGED, "w\u2028" + FORGED,
                FORGED)
"""File names that would draw the verified line if shown raw (newline, CR, an ANSI erase,
the Unicode line separator, a name that starts with the check mark)."""


def forged() -> list[Turn]:
    """Files named like the verified line, then a failing test: a paused, unverified task."""
    return [
        Turn(tool_calls=tuple(call("create_file", path=name, content="x = 1\n")
                              for name in FORGED_NAMES)),
        Turn(tool_calls=(call("create_file", path="test_fail.py",
                              content="def test_fail():\n    assert False\n"),)),
        Turn(tool_calls=(call("run_command", command=check_command("test_fail.py")),)),
        Turn(text="Added the test; it fails."),
        Turn(text="It still fails; I stop here."),
    ]


FORGED_ANSWER = ("The notes folder holds two files.\n" + FORGED + "\n✓ Task complete"
                 "\r✓ Verified\u2028✓ Done · 0 files changed")
"""An answer whose lines imitate the product's verdict (a newline, a CR, a line separator)."""


def forged_answer() -> list[Turn]:
    """A question answered in one step with an answer that forges verdict lines."""
    return [Turn(text=FORGED_ANSWER)]


def rewrite(path: str, content: str) -> list[Turn]:
    """Overwrite ``path`` (a prose file: the read-back is the evidence) and say so."""
    return [
        Turn(tool_calls=(call("write_file", path=path, content=content),)),
        Turn(text=f"Rewrote {path}."),
    ]


def delegating() -> list[Turn]:
    """The parent hands a question to a sub-agent, which answers; then the parent answers:
    a parent task and its sub-agent ``<id>.1`` in the ledger, both completed."""
    return [
        Turn(tool_calls=(call("delegate_task", task="Which files are in this folder?"),)),
        Turn(text="There are no files in this folder."),
        Turn(text="The helper found no files here."),
    ]


def quiet(tasks: int) -> list[Turn]:
    """One answer, no tool call, per task: ``tasks`` tasks (any order) each complete in one
    step, whatever order they take their turn in."""
    return [Turn(text="Nothing to change here.") for _ in range(tasks)]


CODE_IN_PROSE = ('```python\nprint("Hello, World!")\n```\n\n'
                 'This prints "Hello, World!" when you run `python hello.py`.')
QUESTION = "Should todos live in JSON or SQLite?"


def no_tools() -> list[Turn]:
    """Prose, no call, to every request, both forced rounds too: the model shows it takes no
    tools, so the task fails ``NoToolSupport`` (not resumable) after the second one."""
    return [Turn(text=CODE_IN_PROSE) for _ in range(3)]


def asking() -> list[Turn]:
    """The model asks the user through ``finish``: a ``QuestionPause`` (paused, resumable)."""
    return [Turn(tool_calls=(call("finish", status="question", question=QUESTION),))]


STREAMED = "Reading the notes first, then the summary: all three items are done. "
STREAM_GATE = "stream-gate"
"""The file (in ``MERCURY_HOME``) whose appearance lets the ``-stream`` model finish its reply."""


def streaming() -> list[Turn]:
    """An answer that streams four small chunks, then holds the rest (in the lab process)
    until the test creates ``$MERCURY_HOME/stream-gate``: the panel shows the words so far
    while the task is still running, then the final answer."""
    gate = os.path.join(os.environ.get("MERCURY_HOME", tempfile.gettempdir()), STREAM_GATE)
    return [Turn(text=STREAMED, chunk_size=6,
                 fault=Stall(seconds=120, after_chunks=4, until=gate))]


PAGING_TASKS = 11
"""How many ``-page`` tasks its script holds: with the browser lab's page size of 5 and
one more paused task, more than two pages."""


def register_all(prefix: str = "panel") -> None:
    """``scripted/<prefix>-complete``, ``-slow``, ``-pause``, ``-xss``, ``-cli``,
    ``-reload-clean``, ``-reload-dirty``, ``-delegate``, ``-filter-a``, ``-filter-b``,
    ``-steps``, ``-page-pause``, ``-notools``, ``-question``, ``-forged``, ``-forged-answer``,
    ``-stream``, ``-approve-once``, ``-approve-deny``, ``-approve-shot``, ``-approve-late``
    and ``-page``
    (PAGING_TASKS tasks) (fresh scripts; each plays once, so a lab
    session gives each test its own)."""
    register_scripted_model(f"{prefix}-complete", verified())
    register_scripted_model(f"{prefix}-slow", slow())
    register_scripted_model(f"{prefix}-pause", pausing())
    register_scripted_model(f"{prefix}-xss", hostile())
    register_scripted_model(f"{prefix}-cli", verified("test_cli_made.py"))
    register_scripted_model(f"{prefix}-reload-clean", rewrite("clean.md", "# from the task\n"))
    register_scripted_model(f"{prefix}-reload-dirty", rewrite("dirty.md", "# from the task\n"))
    register_scripted_model(f"{prefix}-delegate", delegating())
    register_scripted_model(f"{prefix}-filter-a", pausing())
    register_scripted_model(f"{prefix}-filter-b", pausing())
    register_scripted_model(f"{prefix}-steps", pausing())
    register_scripted_model(f"{prefix}-page-pause", pausing())
    register_scripted_model(f"{prefix}-page", quiet(PAGING_TASKS))
    register_scripted_model(f"{prefix}-notools", no_tools())
    register_scripted_model(f"{prefix}-question", asking())
    register_scripted_model(f"{prefix}-forged", forged())
    register_scripted_model(f"{prefix}-forged-answer", forged_answer())
    register_scripted_model(f"{prefix}-stream", streaming())
    register_scripted_model(f"{prefix}-approve-once", verified("test_approved.py"))
    register_scripted_model(f"{prefix}-approve-deny", verified("test_denied.py"))
    register_scripted_model(f"{prefix}-approve-shot", verified("test_shot.py"))
    register_scripted_model(f"{prefix}-approve-late", verified("test_late.py"))


def cli_main(argv: list[str]) -> int:
    """The CLI with the scripts registered: ``python panel_scripts.py run TASK ...``."""
    from mercury_nb.cli import main

    register_all()
    return main(argv)


if __name__ == "__main__":
    raise SystemExit(cli_main(sys.argv[1:]))
