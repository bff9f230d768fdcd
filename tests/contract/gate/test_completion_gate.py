"""The verification gate: evidence-gated completion with exactly one forced round, held to
what the task asks (a read-back verifies only content the task asks for, where it said)."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.gate.completion_gate import (
    VERIFICATION_NOTICE,
    Complete,
    CompleteNoChanges,
    ForceVerification,
    GateDecision,
    GateObservation,
    GateState,
    PauseFilesMissing,
    PauseVerificationFailed,
    is_non_code_path,
    not_created_line,
    step_gate,
    verification_prompt,
)
from mercury_nb.contract.gate.task_reading import read_task
from mercury_nb.contract.gate.task_requirements import NOTHING_ASKED, TaskRequirements
from mercury_nb.contract.gate.verification import (
    CheckFailed,
    CheckRecord,
    CheckStale,
    EvidenceVerdict,
    NoCheck,
    ReadBack,
    Verified,
    judge_evidence,
)

EXECUTE = MercuryConfig(mode="execute")
CHAT = MercuryConfig(mode="chat")
FRESH = GateState()
AFTER_FORCED = GateState(forced_rounds=1)

PASSED = CheckRecord("pytest", 0, 5)
FAILED = CheckRecord("npm test", 1, 5)
TIMED_OUT = CheckRecord("pytest", 0, 5, timed_out=True)
OLD = CheckRecord("pytest", 0, 2)
CODE = ("src/app.py",)
DOCS = ("README.md", "data/sales.csv")
ASKED = {
    CODE: read_task("Fix the crash in src/app.py"),
    DOCS: read_task("Update README.md and add this month's rows to data/sales.csv"),
}
"""The task each change list answers in the tables below."""


def decide(
    state: GateState,
    paths: tuple[str, ...],
    evidence: EvidenceVerdict,
    config: MercuryConfig = EXECUTE,
    asked: TaskRequirements | None = None,
    missing: tuple[str, ...] = (),
) -> tuple[GateState, GateDecision]:
    requirements = asked if asked is not None else ASKED.get(paths, NOTHING_ASKED)
    return step_gate(state, GateObservation(paths, evidence, requirements, missing), config)


@pytest.mark.parametrize(
    ("state", "paths", "evidence", "config", "expected"),
    [
        pytest.param(FRESH, (), NoCheck(), EXECUTE, CompleteNoChanges(), id="no-changes"),
        pytest.param(FRESH, (), NoCheck(), CHAT, CompleteNoChanges(), id="chat-no-changes"),
        pytest.param(
            FRESH, (), CheckFailed(FAILED), EXECUTE, CompleteNoChanges(), id="no-changes-failed"
        ),
        pytest.param(
            FRESH, CODE, Verified(PASSED), EXECUTE, Complete(Verified(PASSED)), id="verified"
        ),
        pytest.param(
            FRESH, CODE, Verified(PASSED), CHAT, Complete(Verified(PASSED)), id="chat-verified"
        ),
        pytest.param(
            FRESH, DOCS, NoCheck(), EXECUTE, Complete(ReadBack(DOCS)), id="docs-read-back"
        ),
        pytest.param(
            FRESH, DOCS, CheckStale(OLD), EXECUTE, Complete(ReadBack(DOCS)), id="docs-stale-ok"
        ),
        pytest.param(
            FRESH, DOCS, Verified(PASSED), EXECUTE, Complete(Verified(PASSED)), id="docs-verified"
        ),
        pytest.param(FRESH, DOCS, NoCheck(), CHAT, Complete(ReadBack(DOCS)), id="chat-docs"),
        # after the one forced round: pause honestly
        pytest.param(
            AFTER_FORCED,
            CODE,
            NoCheck(),
            EXECUTE,
            PauseVerificationFailed(None, stale=False),
            id="forced-then-no-check",
        ),
        pytest.param(
            AFTER_FORCED,
            CODE,
            CheckFailed(FAILED),
            EXECUTE,
            PauseVerificationFailed(FAILED, stale=False),
            id="forced-then-failed",
        ),
        pytest.param(
            AFTER_FORCED,
            CODE,
            CheckFailed(TIMED_OUT),
            EXECUTE,
            PauseVerificationFailed(TIMED_OUT, stale=False),
            id="forced-then-timed-out",
        ),
        pytest.param(
            AFTER_FORCED,
            CODE,
            CheckStale(OLD),
            EXECUTE,
            PauseVerificationFailed(OLD, stale=True),
            id="forced-then-stale",
        ),
        pytest.param(
            AFTER_FORCED,
            CODE,
            Verified(PASSED),
            EXECUTE,
            Complete(Verified(PASSED)),
            id="forced-then-verified",
        ),
        pytest.param(
            AFTER_FORCED,
            DOCS,
            CheckFailed(FAILED),
            EXECUTE,
            PauseVerificationFailed(FAILED, stale=False),
            id="docs-failed-check-is-never-ignored",
        ),
        # chat mode never forces a round
        pytest.param(
            FRESH,
            CODE,
            NoCheck(),
            CHAT,
            PauseVerificationFailed(None, stale=False),
            id="chat-changes-without-evidence-pause",
        ),
        pytest.param(
            FRESH,
            CODE,
            CheckStale(OLD),
            CHAT,
            PauseVerificationFailed(OLD, stale=True),
            id="chat-stale-pause",
        ),
    ],
)
def test_gate_decision(
    state: GateState,
    paths: tuple[str, ...],
    evidence: EvidenceVerdict,
    config: MercuryConfig,
    expected: GateDecision,
) -> None:
    new_state, decision = decide(state, paths, evidence, config)
    assert decision == expected
    assert new_state == state


@pytest.mark.parametrize(
    ("paths", "evidence", "reason"),
    [
        pytest.param(CODE, NoCheck(), "no build, test or type check ran", id="no-check"),
        pytest.param(CODE, CheckFailed(FAILED), "`npm test` exited 1", id="failed"),
        pytest.param(CODE, CheckFailed(TIMED_OUT), "`pytest` timed out", id="timed-out"),
        pytest.param(CODE, CheckStale(OLD), "`pytest` ran before your latest change", id="stale"),
        pytest.param(DOCS, CheckFailed(FAILED), "`npm test` exited 1", id="docs-failed"),
    ],
)
def test_missing_evidence_forces_exactly_one_round(
    paths: tuple[str, ...], evidence: EvidenceVerdict, reason: str
) -> None:
    state, decision = decide(FRESH, paths, evidence)
    assert isinstance(decision, ForceVerification)
    assert decision.tool_choice == "required"
    assert decision.notice == VERIFICATION_NOTICE
    assert reason in decision.prompt
    assert state == GateState(forced_rounds=1)
    _, second = decide(state, paths, evidence)
    assert isinstance(second, PauseVerificationFailed)


def test_notice_text_is_exact() -> None:
    assert VERIFICATION_NOTICE == (
        "Checking my work before I call it done — running the build/tests now…"
    )


@pytest.mark.parametrize(
    ("paths", "expected", "absent"),
    [
        pytest.param(("a.py",), "exit code is the evidence", "jupyter execute", id="code"),
        pytest.param(("a.ipynb", "b.py"), "jupyter execute", "npm test", id="notebooks"),
    ],
)
def test_prompt_asks_for_the_right_check(
    paths: tuple[str, ...], expected: str, absent: str
) -> None:
    prompt = verification_prompt(NoCheck(), paths)
    assert prompt.startswith("[SYSTEM: VERIFY]")
    assert expected in prompt
    assert absent not in prompt
    assert all(path in prompt for path in paths)


def test_prompt_lists_at_most_ten_paths() -> None:
    paths = tuple(f"src/m{i}.py" for i in range(13))
    prompt = verification_prompt(NoCheck(), paths)
    assert "src/m9.py" in prompt
    assert "src/m10.py" not in prompt
    assert "and 3 more" in prompt


@pytest.mark.parametrize(
    ("path", "non_code"),
    [
        pytest.param("README.md", True, id="markdown"),
        pytest.param("docs/guide.rst", True, id="rst"),
        pytest.param("notes.TXT", True, id="txt-upper"),
        pytest.param("data/sales.csv", True, id="csv"),
        pytest.param("data/x.tsv", True, id="tsv"),
        pytest.param("LICENSE", True, id="license"),
        pytest.param("requirements.txt", False, id="requirements"),
        pytest.param("requirements-dev.txt", False, id="requirements-dev"),
        pytest.param("CMakeLists.txt", False, id="cmake"),
        pytest.param("package.json", False, id="json-config"),
        pytest.param("config.yaml", False, id="yaml"),
        pytest.param("pyproject.toml", False, id="toml"),
        pytest.param("index.html", False, id="html"),
        pytest.param("analysis.ipynb", False, id="notebook"),
        pytest.param("app.py", False, id="python"),
        pytest.param("Makefile", False, id="makefile"),
        pytest.param("docs\\notes.md", True, id="windows-separator"),
    ],
)
def test_non_code_paths(path: str, non_code: bool) -> None:
    assert is_non_code_path(path) is non_code


def test_mixed_changes_need_a_check() -> None:
    _, decision = decide(FRESH, ("README.md", "src/app.py"), NoCheck())
    assert isinstance(decision, ForceVerification)


@pytest.mark.parametrize(
    ("run", "told"),
    [
        pytest.param(
            "pytest -q 2>&1 | tail -5",
            "Your run `pytest -q 2>&1 | tail -5` did not count as evidence: it was piped into "
            "`tail`, so the exit code was `tail`'s. Run `pytest -q` on its own so that its exit "
            "code is the evidence.",
            id="piped",
        ),
        pytest.param(
            "pytest --collect-only",
            "Your run `pytest --collect-only` did not count as evidence: `--collect-only` only "
            "lists or prints, nothing was checked. Run `pytest` on its own",
            id="collect-only",
        ),
        pytest.param(
            "true || pytest",
            "it was on the right-hand side of `||`, so it may never have run. Run `pytest` on",
            id="right-of-or",
        ),
    ],
)
def test_the_forced_round_says_why_a_run_did_not_count(run: str, told: str) -> None:
    records = [CheckRecord(command=run, exit_code=0, seq=2)]
    evidence = judge_evidence(records, last_mutation_seq=1)
    prompt = verification_prompt(evidence, ("calc.py",))
    assert told in prompt
    stale = judge_evidence([CheckRecord("pytest", 0, 0), *records], last_mutation_seq=1)
    assert told in verification_prompt(stale, ("calc.py",))


def test_the_forced_round_says_nothing_extra_without_such_a_run() -> None:
    assert "did not count" not in verification_prompt(NoCheck(), ("calc.py",))


HELLO = read_task("Create hello.py that prints hello world, and run it.")
CALC = read_task(
    "Add a function add(a, b) to calc.py and a pytest test in test_calc.py, then make the "
    "tests pass."
)
NOTES = read_task("Write a summary of the project in NOTES.md")
SLEEP = read_task("Run the shell command `sleep 300` in the workspace.")
QUESTION = read_task("What is in the data folder?")
HELLO_RUN = CheckRecord("python hello.py", 0, 5)


@pytest.mark.parametrize(
    ("state", "asked", "paths", "evidence", "missing", "config", "expected"),
    [
        # the recorded false completions: junk prose for a code or run task
        pytest.param(AFTER_FORCED, HELLO, ("file.txt",), NoCheck(), ("hello.py",), EXECUTE,
                     PauseFilesMissing(("hello.py",)), id="r9-hello-missing"),
        pytest.param(AFTER_FORCED, CALC, ("create_file_path.txt",), NoCheck(),
                     ("calc.py", "test_calc.py"), EXECUTE,
                     PauseFilesMissing(("calc.py", "test_calc.py")), id="r10-calc-missing"),
        pytest.param(AFTER_FORCED, SLEEP, ("workspace/workspace.csv.csv",), NoCheck(), (),
                     EXECUTE, PauseVerificationFailed(None, stale=False), id="r14b-junk-csv"),
        pytest.param(FRESH, HELLO, ("file.txt",), NoCheck(), ("hello.py",), CHAT,
                     PauseFilesMissing(("hello.py",)), id="chat-missing-never-forces"),
        # a passing check does not make up for a missing file
        pytest.param(AFTER_FORCED, CALC, ("calc.py",), Verified(PASSED), ("test_calc.py",),
                     EXECUTE, PauseFilesMissing(("test_calc.py",)), id="verified-but-missing"),
        # the requested run is the evidence
        pytest.param(FRESH, HELLO, ("hello.py",), Verified(HELLO_RUN), (), EXECUTE,
                     Complete(Verified(HELLO_RUN)), id="hello-ran"),
        # a read-back verifies only content the task asks for, where it said
        pytest.param(FRESH, NOTES, ("NOTES.md",), NoCheck(), (), EXECUTE,
                     Complete(ReadBack(("NOTES.md",))), id="notes-read-back"),
        pytest.param(FRESH, NOTES, ("NOTES.md",), NoCheck(), (), CHAT,
                     Complete(ReadBack(("NOTES.md",))), id="chat-notes-read-back"),
        pytest.param(AFTER_FORCED, NOTES, ("NOTES.md", "junk.txt"), NoCheck(), (), EXECUTE,
                     PauseVerificationFailed(None, stale=False), id="notes-and-junk"),
        pytest.param(AFTER_FORCED, QUESTION, ("junk.txt",), NoCheck(), (), EXECUTE,
                     PauseVerificationFailed(None, stale=False), id="question-junk"),
        pytest.param(AFTER_FORCED, NOTHING_ASKED, ("README.md",), NoCheck(), (), EXECUTE,
                     PauseVerificationFailed(None, stale=False), id="empty-reading-is-strict"),
        # nothing changed but hello.py is still missing: a command that wrote nothing (the
        # guard, which ran first, saw a change attempted) is no hello.py
        pytest.param(AFTER_FORCED, HELLO, (), NoCheck(), ("hello.py",), EXECUTE,
                     PauseFilesMissing(("hello.py",)), id="no-changes-missing-after-round"),
        pytest.param(FRESH, HELLO, (), NoCheck(), ("hello.py",), CHAT,
                     PauseFilesMissing(("hello.py",)), id="chat-no-changes-missing"),
        pytest.param(FRESH, HELLO, (), NoCheck(), (), EXECUTE, CompleteNoChanges(),
                     id="no-changes-nothing-missing"),
    ],
)
def test_gate_holds_evidence_to_the_task(
    state: GateState,
    asked: TaskRequirements,
    paths: tuple[str, ...],
    evidence: EvidenceVerdict,
    missing: tuple[str, ...],
    config: MercuryConfig,
    expected: GateDecision,
) -> None:
    new_state, decision = decide(state, paths, evidence, config, asked, missing)
    assert decision == expected
    assert new_state == state


def test_missing_files_use_the_one_forced_round_naming_them() -> None:
    state, decision = decide(FRESH, ("file.txt",), NoCheck(), EXECUTE, HELLO, ("hello.py",))
    assert isinstance(decision, ForceVerification)
    assert decision.tool_choice == "required"
    assert decision.prompt.startswith("[SYSTEM: VERIFY] hello.py was not created.")
    assert "run `hello.py`" not in decision.prompt
    assert "The task asks you to run hello.py" in decision.prompt
    assert "Changed: file.txt." in decision.prompt
    assert state == GateState(forced_rounds=1)
    _, second = decide(state, ("file.txt",), NoCheck(), EXECUTE, HELLO, ("hello.py",))
    assert second == PauseFilesMissing(("hello.py",))
    assert not_created_line(("calc.py", "test_calc.py")) == (
        "calc.py was not created; test_calc.py was not created"
    )


def test_missing_files_are_named_even_when_nothing_changed() -> None:
    # the model ran a command that wrote nothing (a change attempted, so the guard let it
    # by) and said it was done: hello.py does not exist, so no "Response delivered"
    state, decision = decide(FRESH, (), NoCheck(), EXECUTE, HELLO, ("hello.py",))
    assert isinstance(decision, ForceVerification)
    assert decision.prompt.startswith("[SYSTEM: VERIFY] hello.py was not created.")
    assert "Nothing changed on disk yet." in decision.prompt
    assert "Changed:" not in decision.prompt
    _, second = decide(state, (), NoCheck(), EXECUTE, HELLO, ("hello.py",))
    assert second == PauseFilesMissing(("hello.py",))


def test_the_forced_round_names_the_command_the_task_asked_to_run() -> None:
    _, decision = decide(FRESH, ("x.csv",), NoCheck(), EXECUTE, SLEEP)
    assert isinstance(decision, ForceVerification)
    assert "The task asks you to run `sleep 300`" in decision.prompt


def test_the_forced_round_says_where_the_task_wanted_the_content() -> None:
    _, decision = decide(FRESH, ("NOTES.md", "junk.txt"), NoCheck(), EXECUTE, NOTES)
    assert isinstance(decision, ForceVerification)
    assert "The task names NOTES.md, but you changed junk.txt." in decision.prompt


@pytest.mark.parametrize(
    ("asked", "generic"),
    [
        pytest.param(SLEEP, False, id="a-named-run-is-the-check"),
        pytest.param(HELLO, False, id="a-named-program-is-the-check"),
        pytest.param(CALC, True, id="tests-need-the-test-run"),
        pytest.param(NOTHING_ASKED, True, id="nothing-named"),
    ],
)
def test_the_forced_round_asks_for_the_requested_run_or_a_check(
    asked: TaskRequirements, generic: bool
) -> None:
    prompt = verification_prompt(NoCheck(), ("x.py",), asked)
    assert ("Run the project's build, tests or type check" in prompt) is generic
    assert ("The task asks you to run" in prompt) is bool(asked.runs)
