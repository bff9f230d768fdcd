"""A run the task asked for is recognized by words: the program it runs, or the exact command."""

from __future__ import annotations

import pytest

from mercury_nb.contract.gate.requested_runs import NO_RUNS, RequestedRuns, is_requested_run
from mercury_nb.contract.gate.verification import (
    CheckFailed,
    CheckRecord,
    CheckStale,
    NoCheck,
    Verified,
    judge_evidence,
)

HELLO = RequestedRuns(programs=("hello.py",))
SLEEP = RequestedRuns(commands=("sleep 300",))


@pytest.mark.parametrize(
    ("command", "runs", "requested"),
    [
        pytest.param("python hello.py", HELLO, True, id="python"),
        pytest.param("python3 -u hello.py", HELLO, True, id="python3-option"),
        pytest.param("python ./hello.py", HELLO, True, id="dot-slash"),
        pytest.param("python /work/ws/hello.py", HELLO, True, id="absolute"),
        pytest.param("./hello.py", HELLO, True, id="executable"),
        pytest.param("cd . && python hello.py", HELLO, True, id="after-cd"),
        pytest.param("uv run python hello.py", HELLO, True, id="launcher"),
        pytest.param("python -m hello", HELLO, True, id="module"),
        pytest.param("python hello.py | tail -1", HELLO, False, id="piped"),
        pytest.param("python hello.py || true", HELLO, False, id="masked"),
        pytest.param("echo python hello.py", HELLO, False, id="echo"),
        pytest.param("cat hello.py", HELLO, False, id="cat"),
        pytest.param("python -c 'import hello'", HELLO, False, id="dash-c"),
        pytest.param("python hello.py --help", HELLO, False, id="help"),
        pytest.param("python other.py", HELLO, False, id="other-program"),
        pytest.param("python src/hello.py", HELLO, False, id="other-directory"),
        pytest.param("python hello.py", NO_RUNS, False, id="nothing-asked"),
        pytest.param("sleep 300", SLEEP, True, id="command"),
        pytest.param("sleep   300", SLEEP, True, id="command-spacing"),
        pytest.param("timeout 400 sleep 300", SLEEP, True, id="command-wrapped"),
        pytest.param("sleep 3", SLEEP, False, id="other-argument"),
        pytest.param("sleep 300 ; echo done", SLEEP, False, id="followed"),
        pytest.param("bash run.sh", RequestedRuns(programs=("run.sh",)), True, id="shell-script"),
        pytest.param("node app.js", RequestedRuns(programs=("app.js",)), True, id="node"),
    ],
)
def test_is_requested_run(command: str, runs: RequestedRuns, requested: bool) -> None:
    assert is_requested_run(command, runs) is requested


def test_the_requested_run_counts_as_a_check_even_as_the_last_change() -> None:
    # a run of a program may write files, so the loop logs it as a mutation
    run = CheckRecord("python hello.py", 0, 2)
    assert judge_evidence([run], last_mutation_seq=2, runs=HELLO) == Verified(run)
    assert judge_evidence([run], last_mutation_seq=2) == NoCheck()


def test_a_requested_run_before_the_latest_change_is_stale() -> None:
    run = CheckRecord("python hello.py", 0, 2)
    assert judge_evidence([run], last_mutation_seq=3, runs=HELLO) == CheckStale(run)


def test_a_failing_requested_run_is_not_hidden_by_a_passing_check() -> None:
    run = CheckRecord("python hello.py", 1, 3)
    lint = CheckRecord("ruff check .", 0, 4)
    assert judge_evidence([run, lint], last_mutation_seq=3, runs=HELLO) == CheckFailed(run)


def test_when_notebooks_changed_only_a_notebook_run_counts() -> None:
    run = CheckRecord("python hello.py", 0, 3)
    verdict = judge_evidence([run], last_mutation_seq=2, notebooks_changed=True, runs=HELLO)
    assert verdict == NoCheck()
