"""In a verification kernel the magics start nothing: one line printed, the cell passes, no
task in the registry or the ledger (an in-process IPython shell with the mark set)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from pydantic import TypeAdapter, ValidationError

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.verification_run import (
    SKIPPED_IN_VERIFICATION,
    VERIFICATION_RUN_ENV,
    in_verification_run,
)
from mercury_nb.kernel.ledger_magics import NothingToWait
from mercury_nb.ledger.store import Ledger
from mercury_nb.runs import registry
from mercury_nb.testing import Turn, call, register_scripted_model, unregister_scripted_model

MODEL = "scripted/verification-must-not-run"


@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[InteractiveShell]:
    monkeypatch.setenv(VERIFICATION_RUN_ENV, "1")
    monkeypatch.setenv("MERCURY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MERCURY_PLAIN", raising=False)
    register_scripted_model(MODEL, [
        Turn(tool_calls=(call("create_file", path="made.txt", content="x\n"),)),
        Turn(text="Made it."),
    ])
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mercury_nb")
    yield shell
    shell.run_line_magic("unload_ext", "mercury_nb")
    unregister_scripted_model(MODEL)


def started_nothing(tmp_path: Path, before: object) -> None:
    assert registry.latest() is before, "a task was started"
    assert not (tmp_path / "made.txt").exists()
    ledger_file = tmp_path / "home" / "ledger.sqlite3"
    if ledger_file.exists():
        ledger = Ledger(ledger_file)
        try:
            assert ledger.list_tasks() == []
        finally:
            ledger.close()


@pytest.mark.parametrize("cell", [
    pytest.param(f"%%mercury --model {MODEL} --workdir {{tmp}}\nMake made.txt.", id="background"),
    pytest.param(f"%%mercury --wait --model {MODEL} --workdir {{tmp}}\nMake made.txt.", id="wait"),
    pytest.param(f"%%mercury --model {MODEL} --workdir {{tmp}}\ncontinue", id="cell-continue"),
    pytest.param(f"%mercury continue --model {MODEL} --workdir {{tmp}}", id="line-continue"),
    pytest.param("%mercury stop 0123456789ab", id="line-stop"),
    pytest.param("%mercury tasks", id="line-tasks"),
    pytest.param("%%mercury --bogus\nMake made.txt.", id="bad-flags"),
])
def test_every_magic_prints_one_line_starts_nothing_and_passes(
    ip: InteractiveShell, tmp_path: Path, capsys: pytest.CaptureFixture[str], cell: str,
) -> None:
    before = registry.latest()
    capsys.readouterr()
    result = ip.run_cell(cell.replace("{tmp}", str(tmp_path)))
    assert result.success, result.error_in_exec or result.error_before_exec
    assert result.result is None  # no Out[] line either
    assert capsys.readouterr().out == SKIPPED_IN_VERIFICATION + "\n"
    started_nothing(tmp_path, before)


async def test_a_wait_cell_in_a_running_loop_gets_something_to_await(
    ip: InteractiveShell, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert ip.transform_cell(f"%%mercury --wait --model {MODEL}\nGo.\n").startswith("await ")
    before = registry.latest()
    waiter = ip.run_cell_magic("mercury", f"--wait --model {MODEL} --workdir {tmp_path}", "Go.")
    assert isinstance(waiter, NothingToWait)
    await waiter
    assert capsys.readouterr().out == SKIPPED_IN_VERIFICATION + "\n"
    started_nothing(tmp_path, before)


def test_load_ext_in_a_verification_kernel_opens_no_ledger(
    ip: InteractiveShell, tmp_path: Path,
) -> None:
    assert not (tmp_path / "home").exists()


# --- the mark: one variable, read as the config model reads it -----------------------------

WORDS = ["1", "0", "true", "False", "yes", "NO", "on", "off", "t", "f", "y", "n"]


@pytest.mark.parametrize("word", WORDS)
def test_the_mark_reads_as_the_config_model_reads_it(word: str) -> None:
    expected = TypeAdapter(bool).validate_python(word)
    assert in_verification_run({VERIFICATION_RUN_ENV: word}) is expected
    assert MercuryConfig.load({VERIFICATION_RUN_ENV: word}).verification_run is expected


@pytest.mark.parametrize("environ", [{}, {VERIFICATION_RUN_ENV: ""}, {"MERCURY_OTHER": "1"}])
def test_unset_or_empty_is_no_verification_run(environ: dict[str, str]) -> None:
    assert not in_verification_run(environ)
    assert not MercuryConfig.load(environ).verification_run


@pytest.mark.parametrize("word", ["maybe", " 1 ", "2"])
def test_an_unreadable_mark_counts_as_marked_the_side_where_nothing_starts(word: str) -> None:
    with pytest.raises(ValidationError):
        MercuryConfig.load({VERIFICATION_RUN_ENV: word})
    assert in_verification_run({VERIFICATION_RUN_ENV: word})


def test_a_bad_other_variable_does_not_hide_the_mark() -> None:
    environ = {VERIFICATION_RUN_ENV: "1", "MERCURY_MAX_STEPS": "0"}
    with pytest.raises(ValidationError):
        MercuryConfig.load(environ)
    assert in_verification_run(environ)
