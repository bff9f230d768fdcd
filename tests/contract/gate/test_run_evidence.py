"""The evidence a run or tests task needs, and the gate holding such a task to it."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.gate.completion_gate import (
    Complete,
    CompleteNoChanges,
    ForceVerification,
    GateDecision,
    GateObservation,
    GateState,
    PauseVerificationFailed,
    step_gate,
)
from mercury_nb.contract.gate.run_evidence import (
    ANY_RUN,
    THE_TESTS,
    YOUR_PROGRAM,
    RunAnswer,
    asks_to_run,
    is_test_command,
    run_answer,
    run_prompt,
    task_evidence,
)
from mercury_nb.contract.gate.task_reading import read_task
from mercury_nb.contract.gate.task_requirements import TaskRequirements
from mercury_nb.contract.gate.verification import (
    CheckFailed,
    CheckRecord,
    CheckStale,
    EvidenceVerdict,
    NoCheck,
    Verified,
)

EXECUTE = MercuryConfig(mode="execute")
CHAT = MercuryConfig(mode="chat")


def cmd(command: str, exit_code: int = 0, seq: int = 5) -> CheckRecord:
    return CheckRecord(command, exit_code, seq)


@pytest.mark.parametrize(
    ("task", "asks"),
    [
        ("Run python build.py", True),
        ("Run the shell command: ls -la", True),
        ("Run the tests", True),
        ("Create hello.py that prints hello world, and run it.", True),
        ("Create a hello world script and run it", True),
        ("Fix the failing test in test_calc.py", True),
        ("Create hello.py", False),
        ("Write a summary of the project in NOTES.md", False),
    ],
)
def test_asks_to_run(task: str, asks: bool) -> None:
    assert asks_to_run(read_task(task)) is asks


@pytest.mark.parametrize(
    ("command", "tests"),
    [
        ("pytest -q", True),
        ("python -m pytest -q", True),
        ("python -m unittest", True),
        ("npm test", True),
        ("go test ./...", True),
        ("cargo test", True),
        ("python manage.py test", True),
        ("make test", True),
        ("ruff check .", False),
        ("mypy .", False),
        ("tsc --noEmit", False),
        ("cargo build", False),
        ("pytest -q | tail -5", False),
        ("pytest --collect-only", False),
        ("echo pytest", False),
        ("npm test --if-present", False),
    ],
)
def test_is_test_command(command: str, tests: bool) -> None:
    assert is_test_command(command) is tests


HELLO = read_task("Create hello.py that prints hello world, and run it.")
BUILD = read_task("Run python build.py")
LS = read_task("Run the shell command: ls -la")
TESTS = read_task("Run the tests")
UNNAMED = read_task("Create a hello world script and run it")
SERVER = read_task("Start the server and check the port")
NOTEBOOK = read_task("Run the notebook.")


def nb_run(path: str = "outputs.ipynb", exit_code: int = 0, seq: int = 5,
           partial: bool = False) -> CheckRecord:
    return CheckRecord(f"run_cells {path}", exit_code, seq, kind="notebook", path=path,
                       partial=partial)


@pytest.mark.parametrize(
    ("asked", "records", "last_change", "changed", "wanted", "verdict"),
    [
        pytest.param(BUILD, [cmd("python other.py")], None, (), "build.py", NoCheck(),
                     id="another-program-is-no-run"),
        pytest.param(BUILD, [cmd("python build.py")], None, (), "build.py",
                     Verified(cmd("python build.py")), id="the-program"),
        pytest.param(BUILD, [cmd("python build.py", 1)], None, (), "build.py",
                     CheckFailed(cmd("python build.py", 1)), id="the-program-failed"),
        pytest.param(LS, [cmd("ls -la")], None, (), "`ls -la`", Verified(cmd("ls -la")),
                     id="the-command-exactly"),
        pytest.param(LS, [cmd("ls")], None, (), "`ls -la`", NoCheck(), id="another-command"),
        pytest.param(HELLO, [cmd("python -m unittest", seq=6)], 5, ("hello.py",), "hello.py",
                     NoCheck(), id="unittest-is-no-run-of-hello-py"),
        pytest.param(HELLO, [cmd("python hello.py", seq=4)], 5, ("hello.py",), "hello.py",
                     CheckStale(cmd("python hello.py", seq=4)), id="run-before-the-change"),
        pytest.param(TESTS, [cmd("ruff check .")], None, (), THE_TESTS, NoCheck(),
                     id="a-lint-is-no-test-run"),
        pytest.param(TESTS, [cmd("pytest -q")], None, (), THE_TESTS, Verified(cmd("pytest -q")),
                     id="a-test-run"),
        pytest.param(UNNAMED, [cmd("python -m unittest", seq=6)], 5, ("file.txt",), YOUR_PROGRAM,
                     NoCheck(), id="run-it-nothing-runnable-changed"),
        pytest.param(UNNAMED, [cmd("python hello.py", seq=6)], 5, ("hello.py", "notes.md"),
                     "hello.py", Verified(cmd("python hello.py", seq=6)),
                     id="run-it-the-changed-program"),
        pytest.param(SERVER, [cmd("pytest -q")], None, (), ANY_RUN, Verified(cmd("pytest -q")),
                     id="nothing-named-nothing-changed-any-check"),
        pytest.param(NOTEBOOK, [nb_run(seq=5)], 5, ("outputs.ipynb",), "outputs.ipynb",
                     Verified(nb_run(seq=5)), id="run-the-notebook-its-run-wrote-its-outputs"),
        pytest.param(NOTEBOOK, [nb_run(seq=4)], 5, ("outputs.ipynb",), "outputs.ipynb",
                     CheckStale(nb_run(seq=4)), id="run-the-notebook-run-before-a-change"),
        pytest.param(NOTEBOOK, [nb_run(exit_code=1, seq=6)], 5, ("outputs.ipynb",),
                     "outputs.ipynb", CheckFailed(nb_run(exit_code=1, seq=6)),
                     id="run-the-notebook-failed"),
        pytest.param(NOTEBOOK, [nb_run(seq=6, partial=True)], 5, ("outputs.ipynb",),
                     "outputs.ipynb", NoCheck(), id="run-the-notebook-some-cells-is-no-run"),
        pytest.param(NOTEBOOK, [nb_run("other.ipynb", seq=6)], 5, ("outputs.ipynb",),
                     "outputs.ipynb", NoCheck(), id="run-another-notebook-is-no-run"),
        pytest.param(read_task("Run analysis.ipynb"), [nb_run("analysis.ipynb", seq=2)], None,
                     (), "analysis.ipynb", Verified(nb_run("analysis.ipynb", seq=2)),
                     id="run-a-named-notebook"),
    ],
)
def test_run_answer(
    asked: TaskRequirements, records: list[CheckRecord], last_change: int | None,
    changed: tuple[str, ...], wanted: str, verdict: EvidenceVerdict,
) -> None:
    assert asks_to_run(asked)
    answer = run_answer(records, last_change, asked, changed)
    notebooks = wanted.endswith(".ipynb")  # what it asks to run is a notebook: run_cells
    commands = sum(1 for r in records if r.kind == "command")
    assert answer == RunAnswer(wanted, verdict, commands, notebooks)


def test_no_run_asked_is_no_answer() -> None:
    assert run_answer([cmd("pytest")], None, read_task("Create hello.py"), ()) is None


def test_an_uncounted_run_is_kept_for_the_prompt() -> None:
    answer = run_answer([cmd("pytest -q | tail -5")], None, TESTS, ())
    assert answer is not None and isinstance(answer.verdict, NoCheck)
    assert answer.verdict.uncounted is not None and answer.verdict.uncounted.why == "piped"


@pytest.mark.parametrize(
    ("general", "run", "expected"),
    [
        (Verified(cmd("pytest")), None, Verified(cmd("pytest"))),
        (Verified(cmd("pytest")), RunAnswer("hello.py", NoCheck()), NoCheck()),
        (CheckFailed(cmd("pytest", 1)), RunAnswer("hello.py", Verified(cmd("python hello.py"))),
         CheckFailed(cmd("pytest", 1))),
        (NoCheck(), RunAnswer("`ls -la`", Verified(cmd("ls -la"))), Verified(cmd("ls -la"))),
    ],
)
def test_task_evidence(general: EvidenceVerdict, run: RunAnswer | None,
                       expected: EvidenceVerdict) -> None:
    assert task_evidence(general, run) == expected


LS_RAN = RunAnswer("`ls -la`", Verified(cmd("ls -la")), 1)
SLEEP_MISSING = RunAnswer("`sleep 300`", NoCheck(), 1)
FALSE_FAILED = RunAnswer("`false`", CheckFailed(cmd("false", 1)), 1)
HELLO_MISSING = RunAnswer("hello.py", NoCheck(), 1)
FRESH, AFTER = GateState(), GateState(forced_rounds=1)


@pytest.mark.parametrize(
    ("state", "changed", "general", "run", "config", "expected"),
    [
        pytest.param(FRESH, (), NoCheck(), None, EXECUTE, CompleteNoChanges(),
                     id="no-run-asked-no-changes"),
        pytest.param(FRESH, (), NoCheck(), LS_RAN, EXECUTE, Complete(Verified(cmd("ls -la"))),
                     id="the-requested-run-verifies-without-changes"),
        pytest.param(FRESH, (), NoCheck(), SLEEP_MISSING, EXECUTE, "force",
                     id="missing-run-forces-never-no-changes"),
        pytest.param(AFTER, (), NoCheck(), SLEEP_MISSING, EXECUTE,
                     PauseVerificationFailed(None, False, "`sleep 300`"),
                     id="missing-run-pauses-naming-it"),
        pytest.param(AFTER, (), CheckFailed(cmd("false", 1)), FALSE_FAILED, EXECUTE,
                     PauseVerificationFailed(cmd("false", 1), False, "`false`"),
                     id="failed-run-pauses-naming-it"),
        pytest.param(FRESH, ("hello.py",), Verified(cmd("python -m unittest")), HELLO_MISSING,
                     EXECUTE, "force", id="another-passing-check-is-no-run"),
        pytest.param(AFTER, ("hello.py",), Verified(cmd("python -m unittest")), HELLO_MISSING,
                     EXECUTE, PauseVerificationFailed(None, False, "hello.py"),
                     id="another-passing-check-then-pause"),
        pytest.param(FRESH, ("hello.py",), CheckFailed(cmd("pytest", 1)),
                     RunAnswer("hello.py", Verified(cmd("python hello.py")), 2), EXECUTE, "force",
                     id="a-passing-run-does-not-hide-a-failing-check"),
        pytest.param(FRESH, (), NoCheck(), SLEEP_MISSING, CHAT, CompleteNoChanges(),
                     id="chat-mode-asks-no-run"),
    ],
)
def test_gate_holds_a_run_task_to_its_run(
    state: GateState, changed: tuple[str, ...], general: EvidenceVerdict,
    run: RunAnswer | None, config: MercuryConfig, expected: GateDecision | str,
) -> None:
    _, decision = step_gate(state, GateObservation(changed, general, run=run), config)
    if expected == "force":
        assert isinstance(decision, ForceVerification)
    else:
        assert decision == expected


def test_the_forced_round_names_the_run_and_why() -> None:
    _, decision = step_gate(FRESH, GateObservation((), CheckFailed(cmd("false", 1)),
                                                   run=FALSE_FAILED), EXECUTE)
    assert isinstance(decision, ForceVerification)
    assert decision.prompt.startswith(
        "[SYSTEM: VERIFY] The task asks you to run `false`, but `false` exited 1.")
    assert run_prompt(SLEEP_MISSING, ()).startswith(
        "[SYSTEM: VERIFY] The task asks you to run `sleep 300`, but it has not run.")
    notebook = run_prompt(RunAnswer("outputs.ipynb", NoCheck(), 0, notebooks=True),
                          ("outputs.ipynb",))
    assert "Run it now with run_cells (every cell, in a fresh kernel)" in notebook
    assert "run_command" not in notebook
    unnamed = run_prompt(RunAnswer(YOUR_PROGRAM, NoCheck(), 1), ("file.txt",))
    assert "None of the files you changed (file.txt) is a program that can run." in unnamed
