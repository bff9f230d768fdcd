"""Verification commands by their words, and the evidence rule by exit code and order."""

from __future__ import annotations

import pytest

from mercury_nb.contract.gate.uncounted_checks import uncounted_check
from mercury_nb.contract.gate.verification import (
    CheckFailed,
    CheckRecord,
    CheckStale,
    EvidenceVerdict,
    NoCheck,
    ReadBack,
    UncountedCheck,
    Verified,
    executes_notebooks,
    is_verification_command,
    judge_evidence,
    touches_notebooks,
)

CHECKS = [
    "pytest",
    "pytest -q tests/test_parse.py",
    "py.test",
    ".venv/bin/pytest -x",
    "python -m pytest",
    "python3 -m pytest -q",
    "python3.11 -X dev -m pytest",
    "python -m unittest discover",
    "python3 -m unittest",
    "python -m mypy mercury_nb",
    "python manage.py test",
    "uv run pytest",
    "uv run --with pytest-cov pytest",
    "poetry run pytest",
    "uvx ruff check .",
    "cd app && pytest",
    "cd app && npm test && echo ok",
    "FOO=1 pytest",
    "FOO=1 BAR=2 python -m pytest",
    "env CI=1 pytest",
    "timeout 300 pytest",
    "timeout -s KILL 60 make test",
    "time cargo test",
    "npm test",
    "npm t",
    "npm run build",
    "npm run lint",
    "npm run typecheck",
    "npm run test",
    "npm run test:unit",
    "npm run-script build",
    "pnpm test",
    "pnpm run build",
    "pnpm lint",
    "yarn test",
    "yarn build",
    "yarn run typecheck",
    "bun test",
    "make",
    "make test",
    "make -C src all",
    "tsc",
    "tsc --noEmit",
    "npx tsc --noEmit",
    "./node_modules/.bin/tsc -p .",
    "ruff check",
    "ruff check --fix src",
    "ruff format --check .",
    "mypy --strict mercury_nb",
    "pyright",
    "cargo build",
    "cargo test",
    "cargo +nightly test",
    "go build ./...",
    "go test ./...",
    "go vet ./...",
    "mvn test",
    "mvn -q verify",
    "gradle build",
    "./gradlew test",
    "jupyter nbconvert --to notebook --execute analysis.ipynb",
    "jupyter execute analysis.ipynb",
    "python -m nbclient analysis.ipynb",
    "papermill in.ipynb out.ipynb",
    "pytest --nbval notebooks/",
    'bash -c "cd app && pytest"',
    "sh -lc 'make test'",
    "pytest > log.txt 2>&1",
    "true && pytest",
    "false || echo x; pytest",
    "command -v pytest || pip install pytest && pytest -q",
    "make -j4 test",
]

NOT_CHECKS = [
    "echo pytest",
    "cat test.py",
    "cat tests/test_parse.py",
    "ls tests",
    "grep -r pytest .",
    "python test_parse.py --help",
    "python -c 'import pytest'",
    "python app.py",
    "pip install pytest",
    "npm install",
    "npm run dev",
    "npm start",
    "yarn",
    "pytest --version",
    "pytest --help",
    "make -n",
    "mvn -v",
    "ruff format .",
    "ruff",
    "cargo run",
    "go run main.go",
    "jupyter nbconvert --to html analysis.ipynb",
    "jupyter lab",
    "pytest | tail -20",
    "pytest 2>&1 | tail -20",
    "pytest || true",
    "pytest; echo done",
    "! pytest",
    "pytest &",
    "latest",
    "./run_latest.sh",
    "echo 'pytest && make'",
    "bash run_tests.sh",
    "pytest 'unclosed",
    "",
    # a check on the right-hand side of || may never run
    "true || pytest",
    "true || python -m pytest -q",
    "ls || make test",
    "true || pytest | tee log",
    "(true || (pytest && ruff check))",
    # dry-run, listing and help flags run nothing
    "pytest --collect-only",
    "pytest --co -q",
    "python -m pytest --co",
    "pytest --fixtures",
    "pytest --markers",
    "pytest --setup-plan",
    "pytest -V",
    "mypy --version",
    "ruff check --help",
    "make --dry-run",
    "make --just-print test",
    "make -n test",
    "make --recon",
    "make -q test",
    "tox -l",
    "tox --notest",
    "nox --list",
    "npx jest --listTests",
    "vitest --list",
    "go test -list . ./...",
    "go build -n ./...",
    "tsc --listFilesOnly",
    "gradle tasks",
    "./gradlew -m build",
]


@pytest.mark.parametrize("command", [pytest.param(c, id=c or "<empty>") for c in CHECKS])
def test_is_verification_command(command: str) -> None:
    assert is_verification_command(command)


@pytest.mark.parametrize("command", [pytest.param(c, id=c or "<empty>") for c in NOT_CHECKS])
def test_is_not_verification_command(command: str) -> None:
    assert not is_verification_command(command)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        pytest.param("jupyter nbconvert --execute --to notebook a.ipynb", True, id="nbconvert"),
        pytest.param("jupyter-nbconvert --execute a.ipynb", True, id="jupyter-nbconvert"),
        pytest.param("jupyter execute a.ipynb", True, id="jupyter-execute"),
        pytest.param("jupyter-execute a.ipynb", True, id="jupyter-execute-script"),
        pytest.param("python -m nbclient a.ipynb", True, id="nbclient"),
        pytest.param("papermill a.ipynb b.ipynb", True, id="papermill"),
        pytest.param("pytest --nbval-lax a.ipynb", True, id="nbval"),
        pytest.param("pytest", False, id="plain-pytest"),
        pytest.param("jupyter nbconvert --to html a.ipynb", False, id="convert-only"),
        pytest.param("cat a.ipynb", False, id="cat"),
    ],
)
def test_executes_notebooks(command: str, expected: bool) -> None:
    assert executes_notebooks(command) is expected


def test_touches_notebooks() -> None:
    assert touches_notebooks(["a.py", "nb/Analysis.IPYNB"])
    assert not touches_notebooks(["a.py", "ipynb.md"])


def run(command: str, exit_code: int | None, seq: int, *, timed_out: bool = False) -> CheckRecord:
    return CheckRecord(command=command, exit_code=exit_code, seq=seq, timed_out=timed_out)


def notebook(exit_code: int | None, seq: int) -> CheckRecord:
    return CheckRecord("execute a.ipynb", exit_code, seq, kind="notebook")


PYTEST_OK_4 = run("pytest", 0, 4)
NPM_FAIL_4 = run("npm test", 1, 4)


@pytest.mark.parametrize(
    ("records", "last_mutation", "verdict"),
    [
        pytest.param([], 3, NoCheck(), id="nothing-ran"),
        pytest.param([run("ls", 0, 4), run("cat a.py", 0, 5)], 3, NoCheck(), id="no-check"),
        pytest.param([PYTEST_OK_4], 3, Verified(PYTEST_OK_4), id="pass-after-change"),
        pytest.param([PYTEST_OK_4], None, Verified(PYTEST_OK_4), id="nothing-changed"),
        # a failing npm test is never evidence
        pytest.param([NPM_FAIL_4], 3, CheckFailed(NPM_FAIL_4), id="failing-npm-test"),
        pytest.param(
            [run("pytest", 0, 4, timed_out=True)],
            3,
            CheckFailed(run("pytest", 0, 4, timed_out=True)),
            id="timed-out-is-failure",
        ),
        pytest.param(
            [run("pytest", None, 4)], 3, CheckFailed(run("pytest", None, 4)), id="no-exit-code"
        ),
        pytest.param([PYTEST_OK_4], 4, CheckStale(PYTEST_OK_4), id="same-seq-is-not-after"),
        pytest.param([PYTEST_OK_4], 7, CheckStale(PYTEST_OK_4), id="stale-pass"),
        pytest.param([NPM_FAIL_4], 7, CheckStale(NPM_FAIL_4), id="stale-fail"),
        pytest.param(
            [run("pytest", 0, 2), run("mypy .", 1, 5)],
            3,
            CheckFailed(run("mypy .", 1, 5)),
            id="old-pass-new-fail",
        ),
        pytest.param(
            [run("pytest", 1, 4), run("pytest", 0, 6)],
            3,
            Verified(run("pytest", 0, 6)),
            id="rerun-passes",
        ),
        pytest.param(
            [run("pytest", 0, 4), run("pytest", 2, 6)],
            3,
            CheckFailed(run("pytest", 2, 6)),
            id="rerun-fails",
        ),
        pytest.param(
            [run("pytest", 1, 4), run("ruff check", 0, 6)],
            3,
            CheckFailed(run("pytest", 1, 4)),
            id="lint-pass-cannot-hide-test-failure",
        ),
        pytest.param(
            [run("pytest  -q", 1, 4), run("pytest -q", 0, 6)],
            3,
            Verified(run("pytest -q", 0, 6)),
            id="same-command-modulo-spaces",
        ),
        pytest.param(
            [run("pytest | tail", 0, 4)], 3,
            NoCheck(UncountedCheck("piped", "pytest", "pytest | tail", "tail")),
            id="piped-exit-code-is-not-evidence",
        ),
        pytest.param(
            [run("echo tests passed", 0, 4)], 3, NoCheck(), id="output-text-is-not-evidence"
        ),
        pytest.param([notebook(0, 4)], 3, Verified(notebook(0, 4)), id="notebook-run"),
        pytest.param([notebook(1, 4)], 3, CheckFailed(notebook(1, 4)), id="notebook-cell-error"),
    ],
)
def test_judge_evidence(
    records: list[CheckRecord], last_mutation: int | None, verdict: EvidenceVerdict
) -> None:
    assert judge_evidence(records, last_mutation) == verdict


@pytest.mark.parametrize(
    ("records", "verdict"),
    [
        pytest.param([PYTEST_OK_4], NoCheck(), id="pytest-does-not-run-notebooks"),
        pytest.param([notebook(0, 4)], Verified(notebook(0, 4)), id="notebook-record"),
        pytest.param(
            [run("jupyter execute a.ipynb", 0, 4)],
            Verified(run("jupyter execute a.ipynb", 0, 4)),
            id="notebook-command",
        ),
        pytest.param(
            [notebook(1, 4), PYTEST_OK_4], CheckFailed(notebook(1, 4)), id="cell-error-wins"
        ),
    ],
)
def test_changed_notebooks_need_a_notebook_run(
    records: list[CheckRecord], verdict: EvidenceVerdict
) -> None:
    assert judge_evidence(records, 3, notebooks_changed=True) == verdict


def cells(exit_code: int, seq: int, *, partial: bool = False, path: str = "a.ipynb",
          failure: str = "") -> CheckRecord:
    """A run_cells record (its own write of outputs may be the last change)."""
    return CheckRecord(f"run notebook {path}", exit_code, seq, kind="notebook", path=path,
                       failure=failure, partial=partial)


BOOM = "cell 4: ValueError: boom"


@pytest.mark.parametrize(
    ("records", "last_mutation", "verdict"),
    [
        pytest.param([cells(0, 4)], 4, Verified(cells(0, 4)),
                     id="a-full-run-is-evidence-though-it-wrote-its-outputs"),
        pytest.param([cells(1, 4, failure=BOOM)], 4, CheckFailed(cells(1, 4, failure=BOOM)),
                     id="a-failing-full-run-is-a-blocker"),
        pytest.param([cells(0, 4, partial=True)], 4, NoCheck(),
                     id="a-passing-partial-run-is-no-check"),
        pytest.param([cells(0, 2), cells(0, 4, partial=True)], 4, CheckStale(cells(0, 2)),
                     id="a-passing-partial-run-does-not-make-an-older-run-fresh"),
        pytest.param([cells(1, 4, partial=True, failure=BOOM)], 4,
                     CheckFailed(cells(1, 4, partial=True, failure=BOOM)),
                     id="a-failing-partial-run-is-a-blocker"),
        pytest.param([cells(1, 4, partial=True, failure=BOOM), cells(0, 5)], 3,
                     Verified(cells(0, 5)), id="a-later-full-run-clears-it"),
        pytest.param([cells(1, 4, failure=BOOM), cells(0, 5, partial=True)], 3,
                     CheckFailed(cells(1, 4, failure=BOOM)),
                     id="a-later-partial-pass-does-not-clear-it"),
        pytest.param([cells(1, 4, failure=BOOM), cells(0, 5, path="b.ipynb")], 3,
                     CheckFailed(cells(1, 4, failure=BOOM)),
                     id="another-notebook-does-not-clear-it"),
        pytest.param([cells(0, 4)], 5, CheckStale(cells(0, 4)), id="an-edit-after-the-run"),
    ],
)
def test_cell_runs_as_evidence(records: list[CheckRecord], last_mutation: int,
                               verdict: EvidenceVerdict) -> None:
    assert judge_evidence(records, last_mutation, notebooks_changed=True) == verdict


@pytest.mark.parametrize(
    "check",
    [
        pytest.param(run("pytest", 1, 1), id="exit-1"),
        pytest.param(run("pytest", None, 1), id="no-exit-code"),
        pytest.param(run("pytest", 0, 1, timed_out=True), id="timed-out"),
    ],
)
def test_verified_refuses_a_failed_check(check: CheckRecord) -> None:
    with pytest.raises(ValueError, match="not evidence"):
        Verified(check)


def test_read_back_needs_a_path() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ReadBack(())


UNCOUNTED = [
    pytest.param("pytest -q 2>&1 | tail -5", "piped", "pytest -q", "tail", id="piped-into-tail"),
    pytest.param("pytest | tee log", "piped", "pytest", "tee", id="piped-into-tee"),
    pytest.param("pytest || true", "masked", "pytest", "true", id="or-true"),
    pytest.param("pytest; echo done", "followed", "pytest", "echo", id="followed-by-echo"),
    pytest.param("pytest &", "background", "pytest", "", id="background"),
    pytest.param("true || pytest", "or-branch", "pytest", "", id="right-of-or"),
    pytest.param("! pytest", "negated", "pytest", "", id="negated"),
    pytest.param("pytest --collect-only", "listing", "pytest --collect-only", "--collect-only",
                 id="collect-only"),
    pytest.param("make -n test", "listing", "make -n test", "-n", id="make-dry-run"),
    pytest.param("cd app && pytest --co", "listing", "pytest --co", "--co", id="after-cd"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "why", "check", "detail"), UNCOUNTED)
def test_why_a_check_did_not_count(command: str, why: str, check: str, detail: str) -> None:
    assert uncounted_check(command) == UncountedCheck(why, check, command, detail)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "command",
    [pytest.param(c, id=c) for c in ("pytest -q", "echo hi | tail", "ls; cat x", "")],
)
def test_counted_checks_and_non_checks_have_no_uncounted_reason(command: str) -> None:
    assert uncounted_check(command) is None
