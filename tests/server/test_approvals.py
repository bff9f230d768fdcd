"""The server's approval board: a question waits on its own loop until an answer from any
thread settles it; a stale or absent question is refused, and a finished wait leaves none."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

import pytest

from mercury_nb.contract.permissions import ApprovalRequest
from mercury_nb.server.approvals import ApprovalBoard, PanelApprover, board_of

REQUEST = ApprovalRequest("run_command", 'run "pip install x"', "pip install x", "",
                          "pip install*")


async def asked(board: ApprovalBoard, task_id: str) -> None:
    while board.pending(task_id) is None:  # the approver registers before its first await
        await asyncio.sleep(0)


async def test_an_answer_from_another_thread_settles_the_question_on_its_loop() -> None:
    board = ApprovalBoard()
    approver = PanelApprover(board)
    approver.task_id = "t1"
    waiting = asyncio.ensure_future(approver(REQUEST, 5.0))
    await asked(board, "t1")
    replies: list[str] = []
    answering = threading.Thread(target=lambda: replies.extend(
        [board.answer("t1", 2, "deny"), board.answer("t1", 1, "always-allow")]))
    answering.start()
    assert await waiting == "always-allow"
    answering.join()
    assert replies == ["stale", "answered"]
    assert board.pending("t1") is None
    assert board.answer("t1", 1, "deny") == "nothing-pending"


async def test_a_wait_cut_short_leaves_nothing_pending_and_a_question_keeps_its_number(
) -> None:
    board = ApprovalBoard()
    approver = PanelApprover(board)
    approver.task_id = "t2"
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(approver(REQUEST, 0.0), 0.01)
    assert board.pending("t2") is None
    second = asyncio.ensure_future(approver(replace(REQUEST, request_id=5), 5.0))
    await asked(board, "t2")
    held = board.pending("t2")
    assert held is not None and held.request_id == 5  # the gate's number, not a count
    assert board.answer("t2", 2, "allow-once") == "stale"
    assert board.answer("t2", 5, "allow-once") == "answered"
    assert await second == "allow-once"


async def test_an_approver_without_its_task_cannot_ask() -> None:
    with pytest.raises(RuntimeError):
        await PanelApprover(ApprovalBoard())(REQUEST, 1.0)


def test_the_board_is_one_per_server() -> None:
    settings: dict[str, object] = {}
    assert board_of(settings) is board_of(settings)
