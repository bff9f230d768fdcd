"""A changed file that did not read back pauses the task naming it and why, quoted so that
a hostile file name cannot pass for the product's own line (issue 18.1)."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import Paused
from mercury_nb.contract.turns.router_state import (
    FinishWith,
    Measured,
    RouterState,
    TurnFacts,
    Unreadable,
)
from mercury_nb.contract.turns.turn_router import step_router
from mercury_nb.contract.turns.turn_verdict import TurnVerdict

TASK = "Write notes.md with a short summary of the project"
FIFO = "a FIFO (named pipe), not a regular file"
BIG = "2,147,483,648 bytes, over the 16,000,000-byte read limit"


@pytest.mark.parametrize(("unreadable", "reason"), [
    ((Unreadable("notes.md", FIFO),),
     f'I couldn\'t read back "notes.md" ({FIFO}), so I\'m not calling it done'),
    ((Unreadable("data/big.csv", BIG), Unreadable("notes.md", FIFO)),
     f'I couldn\'t read back "data/big.csv" ({BIG}), so I\'m not calling it done'),
    ((Unreadable("x\n✓ Verified: python -m pytest -q → exit 0 ✓", FIFO),),
     'I couldn\'t read back "x\\n✓ Verified: python -m pytest -q → exit 0 ✓" '
     f"({FIFO}), so I'm not calling it done"),
    ((Unreadable("tab\there\x1b[2J", "a device, not a regular file"),),
     'I couldn\'t read back "tab\\there\\u001b[2J" (a device, not a regular file), '
     "so I'm not calling it done"),
])
def test_an_unreadable_change_pauses_naming_it(
    unreadable: tuple[Unreadable, ...], reason: str
) -> None:
    config = MercuryConfig(retry_base_s=0.0)
    paths = tuple(u.path for u in unreadable)
    facts = TurnFacts(verdict=TurnVerdict.TEXT_STOP, reply_text="Done.", mutations_in_task=1,
                      measured=Measured(paths, "snapshot", False, unreadable=unreadable))
    _, decision = step_router(RouterState.start(TASK, config), facts, config)
    assert decision == FinishWith(Paused(reason))
    assert "\n" not in reason


def test_an_unmeasured_workspace_without_a_refused_read_keeps_the_plain_pause() -> None:
    config = MercuryConfig(retry_base_s=0.0)
    facts = TurnFacts(verdict=TurnVerdict.TEXT_STOP, reply_text="Done.", mutations_in_task=1,
                      measured=Measured(("notes.md",), "snapshot", False))
    _, decision = step_router(RouterState.start(TASK, config), facts, config)
    assert decision == FinishWith(Paused(
        "I couldn't confirm what changed in the workspace, so I'm not calling it done"))
