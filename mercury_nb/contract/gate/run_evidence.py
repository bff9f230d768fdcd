"""The evidence a task that asks to run something needs: a passing run of what it asked for.

A task that asks to run a program or command ("Run python build.py", "Run the shell
command: ls -la", "Create hello.py ... and run it") is verified only by a passing run of
that program or command after the last change; one that asks to run the tests, only by a
passing test command; "... and run it" with no program named, only by a run of a runnable
file that changed. Any other passing check (``python -m unittest`` with no tests, a lint)
answers nothing the task asked. :func:`run_answer` judges the task's commands for that;
:func:`task_evidence` combines it with the task's general evidence verdict.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from mercury_nb.contract.gate.check_commands import is_verification_command, python_module, unwrap
from mercury_nb.contract.gate.command_line import gating_commands
from mercury_nb.contract.gate.file_kinds import is_non_code_path, same_file
from mercury_nb.contract.gate.requested_runs import RequestedRuns, is_requested_run
from mercury_nb.contract.gate.task_requirements import TaskRequirements
from mercury_nb.contract.gate.verification import (
    CheckFailed,
    CheckRecord,
    CheckStale,
    EvidenceVerdict,
    NoCheck,
    judge_evidence,
)

ANY_RUN = "the program it names"
"""``RunAnswer.wanted`` when the task asks to run something it does not name."""
THE_TESTS = "the tests"
YOUR_PROGRAM = "the new program"


@dataclass(frozen=True)
class RunAnswer:
    """What the task's commands show about the run it asks for.

    ``wanted`` names it (```sleep 300```, ``hello.py``, ``the tests``); ``verdict`` judges
    only the runs that answer the task; ``commands_run`` counts every command the task
    ran, whatever it was (the model acted: the gate, not the narration guard, judges it).
    """

    wanted: str
    verdict: EvidenceVerdict
    commands_run: int = 0
    notebooks: bool = False
    """What it asks to run is notebooks only: ``run_cells`` runs them, not ``run_command``."""


def asks_to_run(requirements: TaskRequirements) -> bool:
    """The task asks to run a program, a command or the tests."""
    return bool(requirements.runs) or bool({"run", "tests"} & requirements.kinds)


_TEST_PROGRAMS = frozenset(
    ["pytest", "py.test", "unittest", "tox", "nox", "jest", "vitest", "mocha", "ava", "tap",
     "nose2", "trial"]
)
_TEST_SUBCOMMANDS = {
    "npm": "test t tst", "pnpm": "test t", "yarn": "test", "bun": "test", "cargo": "test nextest",
    "go": "test", "dotnet": "test", "make": "test check tests", "gmake": "test check tests",
    "mvn": "test verify", "mvnw": "test verify", "gradle": "test check", "gradlew": "test check",
    "deno": "test",
}


def is_test_command(command: str) -> bool:
    """A counted check whose exit status decides ``command``'s and that runs tests
    (``pytest``, ``python -m unittest``, ``npm test``, ``go test`` ...), not a lint or build."""
    if not is_verification_command(command):
        return False
    for words in gating_commands(command):
        unwrapped = unwrap(words)
        if not unwrapped:
            continue
        program, args = python_module(posixpath.basename(unwrapped[0]), unwrapped[1:])
        if program in _TEST_PROGRAMS:
            return True
        sub = next((a for a in args if not a.startswith("-")), None)
        if sub is not None and sub in _TEST_SUBCOMMANDS.get(program, "").split():
            return True
        if (program == "manage.py" and args[:1] == ("test",)) or args[:2] == ("manage.py", "test"):
            return True
    return False


def _listed(names: Sequence[str]) -> str:
    return " and ".join(names)


def _wanted_runs(runs: RequestedRuns) -> str:
    named = [f"`{c}`" for c in runs.commands]
    named += [p for p in runs.programs if not any(p in c for c in runs.commands)]
    return _listed(named)


def _with_uncounted(verdict: EvidenceVerdict, general: EvidenceVerdict) -> EvidenceVerdict:
    uncounted = general.uncounted if isinstance(general, NoCheck | CheckStale) else None
    match verdict:
        case NoCheck():
            return NoCheck(uncounted)
        case CheckStale(check=check):
            return CheckStale(check, uncounted)
        case _:
            return verdict


def run_answer(
    records: Sequence[CheckRecord],
    last_mutation_seq: int | None,
    requirements: TaskRequirements,
    changed_paths: Sequence[str],
) -> RunAnswer | None:
    """The verdict over the runs that answer the task, or None when it asks to run nothing.

    Requested programs or commands: only their runs; the tests: only test commands;
    "run it" with no program named: only runs of the runnable files that changed (none
    changed that can run: nothing answers); nothing named and nothing changed: any check."""
    if not asks_to_run(requirements):
        return None
    commands = sum(1 for r in records if r.kind == "command")
    general = judge_evidence(records, last_mutation_seq, runs=requirements.runs)
    runs = requirements.runs
    if runs:
        wanted = _wanted_runs(runs)
        chosen = _runs_of(records, runs)
    elif "tests" in requirements.kinds:
        wanted = THE_TESTS
        chosen = [r for r in records if r.kind == "command" and is_test_command(r.command)]
    elif changed_paths:
        runnable = tuple(p for p in changed_paths if not is_non_code_path(p))
        runs = RequestedRuns(programs=runnable)
        wanted = _listed(runnable) if runnable else YOUR_PROGRAM
        chosen = _runs_of(records, runs)
    else:
        return RunAnswer(ANY_RUN, general, commands)
    verdict = judge_evidence(chosen, last_mutation_seq, runs=runs)
    notebooks = bool(runs.programs) and not runs.commands and all(
        posixpath.splitext(p)[1].lower() == ".ipynb" for p in runs.programs)
    return RunAnswer(wanted, _with_uncounted(verdict, general), commands, notebooks)


def _runs_of(records: Sequence[CheckRecord], runs: RequestedRuns) -> list[CheckRecord]:
    """The runs of what ``runs`` names: its commands, and the runs of a notebook it names
    (``run_cells``; one of some cells only counts when it fails, as any notebook run)."""
    return [r for r in records
            if (r.kind == "command" and is_requested_run(r.command, runs))
            or (r.kind == "notebook" and any(same_file(p, r.path) for p in runs.programs))]


def task_evidence(general: EvidenceVerdict, run: RunAnswer | None) -> EvidenceVerdict:
    """The verdict that answers the task: the run's, unless no run is asked or a check
    after the last change failed (a passing run does not hide a failing check)."""
    if run is None or isinstance(general, CheckFailed):
        return general
    return run.verdict


_RUN_HEAD = (
    "[SYSTEM: VERIFY] The task asks you to run {wanted}, but {reason}. The task is NOT done"
    " yet."
)
_RUN_BODY = (
    " Run it now with run_command, on its own (not piped, not followed by `|| true` or"
    " `; echo`), after your last change; its exit code is the evidence, and no other check"
    " stands in for it."
)
_NOTEBOOK_BODY = (
    " Run it now with run_cells (every cell, in a fresh kernel), after your last change; a run"
    " with no error is the evidence, and no other check stands in for it."
)
_NO_RUNNABLE = " None of the files you changed ({paths}) is a program that can run."


def _run_reason(verdict: EvidenceVerdict, changed: bool) -> str:
    match verdict:
        case CheckFailed(check=check):
            result = "timed out" if check.timed_out else (
                "ended without an exit code" if check.exit_code is None
                else f"exited {check.exit_code}")
            return f"`{check.command}` {result}"
        case CheckStale(check=check):
            return f"`{check.command}` ran before your latest change"
        case _:
            return "no run of it came after your last change" if changed else "it has not run"


def run_prompt(run: RunAnswer, changed_paths: tuple[str, ...], uncounted: str = "") -> str:
    """The message of the gate's forced round when the run the task asks for is missing,
    failed or stale; ``uncounted`` says why a run of it did not count."""
    reason = _run_reason(run.verdict, bool(changed_paths))
    body = _NOTEBOOK_BODY if run.notebooks else _RUN_BODY
    prompt = _RUN_HEAD.format(wanted=run.wanted, reason=reason) + uncounted + body
    if run.wanted == YOUR_PROGRAM and changed_paths:
        prompt += _NO_RUNNABLE.format(paths=", ".join(changed_paths[:10]))
    if changed_paths:
        prompt += f" Changed: {', '.join(changed_paths[:10])}."
    return prompt


REQUESTED_RUN_PAUSE = (
    "The task asks me to run {run} — that run did not pass, so I'm not calling this done."
)
REQUESTED_RUN_STALE = (
    "The task asks me to run {run} — it has not run since the latest changes, so I'm not"
    " calling this done."
)
REQUESTED_RUN_MISSING = (
    "The task asks me to run {run} — it has not run, so I'm not calling this done."
)
NO_REQUESTED_RUN = "Last run: none — {run} never ran."
