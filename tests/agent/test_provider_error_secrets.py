"""A provider's error is masked once, where it enters the task, with every secret the task
knows: no kind of secret reaches the banner, the ledger row or an event, and no later stage
(provider policy, outcome) masks the message again."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import AgentEvent
from mercury_nb.contract import redaction
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import open_ledger
from mercury_nb.runs import Refusal, RunRequest
from mercury_nb.runs.runner import runner
from mercury_nb.testing import HttpError, Turn

TASK_KEY = "task-key-7f3a9b2c1d8e"  # the task's own key (config), no token shape
ENV_SECRET = "env-secret-5e6d7c8b9a"  # a secret-named variable's value, no token shape
SHAPED = "sk-shaped0123456789abcdef"  # a key-shaped token nobody configured
ASSIGNED = "hunter2hunter2"  # the value of a NAME_PASSWORD=... assignment
SECRETS = (TASK_KEY, ENV_SECRET, SHAPED, ASSIGNED)
LEAK = (f"bad key {TASK_KEY}; env {ENV_SECRET}; tried {SHAPED}; "
        f"DB_PASSWORD={ASSIGNED} marker-of-this-error")


def chain(tmp_path: Path, home: Path, **kw: Any) -> MercuryConfig:
    return MercuryConfig(workdir=tmp_path, home=home, api_key=TASK_KEY, retry_attempts=0,
                         retry_base_s=0.0, **kw)


def assert_masked(texts: list[str]) -> None:
    assert texts
    for text in texts:
        assert not any(secret in text for secret in SECRETS), text


async def run_and_read(config: MercuryConfig, home: Path) -> tuple[Any, Any, list[str]]:
    events: list[AgentEvent] = []
    outcome = await runner.run(RunRequest(task="Write a.txt.", config=config,
                                          sink=events.append))
    assert not isinstance(outcome, Refusal), outcome
    assert outcome.status == "failed" and "marker-of-this-error" in outcome.banner
    handle = open_ledger(home)
    handle.flush()
    record = handle.ledger.get(outcome.task_id)
    assert record is not None
    stored = [e.text or "" for e in handle.ledger.events(outcome.task_id)]
    stored += [e.data or "" for e in handle.ledger.events(outcome.task_id)]
    live = [repr(event) for event in events]
    row = [record.banner or "", record.blocker or "", str(record.providers)]
    return outcome, row, [*stored, *live]


@pytest.mark.parametrize("how", ["scripted", "http"])
async def test_every_kind_of_secret_is_masked_in_banner_ledger_row_and_events(
    how: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    scripted_model, loopback_server,
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", ENV_SECRET)
    fault = Turn(fault=HttpError(401, message=LEAK))
    if how == "scripted":  # the error enters at the loop (a model that masks nothing)
        scripted_model([fault], register="a")
        scripted_model([fault], register="b")
        config = chain(tmp_path, home, model="scripted/a", fallbacks=("scripted/b",))
    else:  # the error enters at the transport, over real HTTP
        server = loopback_server({"a": [fault], "b": [fault]})
        config = chain(tmp_path, home, model="openai/a", fallbacks=("openai/b",),
                       api_base=server.url)
    outcome, row, events = await run_and_read(config, home)
    assert_masked([outcome.banner, outcome.blocker or "", str(outcome.providers)])
    assert_masked(row)
    assert_masked(events)
    assert any("marker-of-this-error" in text for text in events)  # the switch notice


@pytest.mark.parametrize("how", ["scripted", "http"])
async def test_a_provider_error_is_masked_once_before_the_ledger(
    how: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    scripted_model, loopback_server,
) -> None:
    seen: Counter[str] = Counter()
    real = redaction.redact

    def counted(text: str, secrets: Any = ()) -> str:
        if "marker-of-this-error" in text:
            seen["masked"] += 1
        return real(text, secrets)

    # every module that holds the mask, but the ledger's own guard of what it stores
    for name, module in list(sys.modules.items()):
        if name.startswith("mercury_nb.") and not name.startswith("mercury_nb.ledger"):
            for attr in ("redact", "contract_redact"):
                if getattr(module, attr, None) is real:
                    monkeypatch.setattr(module, attr, counted)
    fault = Turn(fault=HttpError(401, message=LEAK))
    if how == "scripted":
        scripted_model([fault], register="solo")
        config = chain(tmp_path, home, model="scripted/solo")
    else:
        server = loopback_server({"a": [fault]})
        config = chain(tmp_path, home, model="openai/a", api_base=server.url)
    await run_and_read(config, home)
    assert seen["masked"] == 1
