"""One run's outcome texts (banner, blocker, answer) reach the ledger redacted once."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract import redaction
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import open_ledger
from mercury_nb.ledger.recorder import TaskRecorder
from mercury_nb.runs import Refusal, RunRequest
from mercury_nb.runs.runner import runner
from mercury_nb.testing import Turn


@pytest.fixture
def redacted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every text the outcome's builder and the recorder redact, counted."""
    seen: Counter[str] = Counter()

    def counted(text: str, secrets: object = ()) -> str:
        seen[text] += 1
        return redaction.redact(text, secrets)  # type: ignore[arg-type]

    monkeypatch.setattr("mercury_nb.agent.finish.redact", counted)
    monkeypatch.setattr("mercury_nb.ledger.recorder.redact", counted)
    return seen


async def test_a_runs_banner_and_answer_are_redacted_once(
        home: Path, tmp_path: Path, scripted_model, redacted: Counter[str]) -> None:
    model = scripted_model([Turn(text="The folder holds nothing yet.")])
    config = MercuryConfig(workdir=tmp_path, home=home, model=model.name, mode="chat")
    outcome = await runner.run(RunRequest(task="What is here?", config=config, model=model))
    assert not isinstance(outcome, Refusal) and outcome.answer is not None, outcome
    handle = open_ledger(home)
    handle.flush()
    record = handle.ledger.get(outcome.task_id)
    assert record is not None and (record.banner, record.answer) == (outcome.banner,
                                                                     outcome.answer)
    assert (redacted[outcome.banner], redacted[outcome.answer]) == (1, 1)


async def test_a_runs_blocker_is_redacted_once(home: Path, tmp_path: Path,
                                               redacted: Counter[str]) -> None:
    config = MercuryConfig(workdir=tmp_path, home=home, model="scripted/not-registered")
    outcome = await runner.run(RunRequest(task="Write a.txt.", config=config))
    assert not isinstance(outcome, Refusal) and outcome.blocker is not None, outcome
    handle = open_ledger(home)
    handle.flush()
    record = handle.ledger.get(outcome.task_id)
    assert record is not None and record.blocker == outcome.blocker
    assert (redacted[outcome.banner], redacted[outcome.blocker]) == (1, 1)


async def test_a_secret_only_the_ledger_knows_is_still_masked(
        home: Path, tmp_path: Path, scripted_model) -> None:
    """The recorder trusts the outcome for the secrets it was redacted with, not for others."""
    secret = "only-the-ledger-knows-4242"
    model = scripted_model([Turn(text=f"The value is {secret}.")])
    config = MercuryConfig(workdir=tmp_path, home=home, model=model.name, mode="chat")
    handle = open_ledger(home)
    recorder = TaskRecorder(handle.writer, "t1", "What is the value?", config,
                            environ={"DEPLOY_TOKEN": secret})
    outcome = await run_new_session("What is the value?", config, model=model, task_id="t1",
                                    on_event=recorder.wrap(lambda event: None))
    handle.flush()
    record = handle.ledger.get("t1")
    assert outcome.answer is not None and secret in outcome.answer  # not a secret it knew
    assert record is not None and record.answer == "The value is ***."
    assert secret not in record.banner
