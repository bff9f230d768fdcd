"""A second task in a busy workspace: refused unless it is a chat question."""

from __future__ import annotations

import pytest

from mercury_nb.contract.shared_workspace import (
    BUSY_MESSAGE,
    StartAllowed,
    WorkspaceBusy,
    WorkspaceOccupant,
    decide_start,
)

LIVE = WorkspaceOccupant("a1", "Build the site", owner_alive=True)
DEAD = WorkspaceOccupant("d1", "Old work", owner_alive=False)
SUB = WorkspaceOccupant("a1.1", "Write the pages", owner_alive=True, sub_agent=True)


@pytest.mark.parametrize(
    ("mode", "running", "refused_for"),
    [
        pytest.param("execute", [], None, id="idle-workspace"),
        pytest.param("execute", [LIVE], "a1", id="live-task-refuses-work"),
        pytest.param("chat", [LIVE], None, id="chat-question-allowed"),
        pytest.param("execute", [DEAD], None, id="dead-owner-does-not-count"),
        pytest.param("execute", [DEAD, LIVE], "a1", id="names-the-live-one"),
        pytest.param("execute", [SUB, LIVE], "a1", id="names-the-parent-not-its-sub-agent"),
    ],
)
def test_decide_start(mode: str, running: list[WorkspaceOccupant], refused_for: str | None) -> None:
    decision = decide_start(mode, running)  # type: ignore[arg-type]
    if refused_for is None:
        assert decision == StartAllowed()
    else:
        assert isinstance(decision, WorkspaceBusy)
        assert decision.running.task_id == refused_for
        assert decision.message == BUSY_MESSAGE.format(task_id="a1", task="Build the site")


def test_the_message_names_the_task_and_how_to_stop_it() -> None:
    long = WorkspaceOccupant("b2", "Refactor\n" + "x" * 200, owner_alive=True)
    decision = decide_start("execute", [long])
    assert isinstance(decision, WorkspaceBusy)
    assert "python -m mercury_nb stop b2" in decision.message
    assert "%mercury stop b2" in decision.message
    assert '"Refactor xxx' in decision.message and "…" in decision.message
