"""A model object replaces the chain once, at the door; the agent's entry takes the config as is."""

from __future__ import annotations

from pathlib import Path

from mercury_nb.agent.events import AgentEvent, TurnEnded
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import open_ledger
from mercury_nb.runs import Refusal, RunRequest
from mercury_nb.runs.runner import runner
from mercury_nb.testing import Turn


async def test_the_door_puts_the_model_object_in_the_settings(home: Path, tmp_path: Path,
                                                               scripted_model) -> None:
    model = scripted_model([Turn(text="Nothing here.")])
    config = MercuryConfig(workdir=tmp_path, home=home, model="openai/other",
                           fallbacks=("openai/spare",), mode="chat")
    outcome = await runner.run(RunRequest(task="What is here?", config=config, model=model))
    assert not isinstance(outcome, Refusal) and outcome.status == "completed", outcome
    handle = open_ledger(home)
    handle.flush()
    checkpoint = handle.ledger.checkpoint(outcome.task_id)
    assert checkpoint is not None
    assert (checkpoint["config"]["model"], checkpoint["config"]["fallbacks"]) == (model.name, [])


async def test_the_agents_entry_keeps_the_config_it_is_given(tmp_path: Path,
                                                             scripted_model) -> None:
    model = scripted_model([Turn(text="Nothing here.")])
    config = MercuryConfig(workdir=tmp_path, model="openai/other", mode="chat")
    events: list[AgentEvent] = []
    await run_new_session("What is here?", config, model=model, on_event=events.append)
    turn = next(e for e in events if isinstance(e, TurnEnded))
    assert turn.checkpoint()["config"]["model"] == "openai/other"
