"""The cell's approval widget: the exact command, three buttons, and the answer they give."""

from __future__ import annotations

import asyncio

import ipywidgets as widgets
import pytest

from mercury_nb.contract.permissions import ApprovalRequest
from mercury_nb.ui.approval_widget import approve_in_box
from mercury_nb.ui.views import ViewApprover

PIP = ApprovalRequest("run_command", 'run "pip install requests"', "pip install requests",
                      suggested_rule="pip install requests")
EDIT = ApprovalRequest("edit_file", "edit_file notes.md",
                       detail="--- a/notes.md\n+++ b/notes.md\n-old\n+<new>")


def _buttons(box: widgets.VBox) -> dict[str, widgets.Button]:
    panel = box.children[-1]
    row = panel.children[-1]
    return {button.description: button for button in row.children}


def _texts(box: widgets.VBox) -> str:
    return "\n".join(w.value for w in box.children[-1].children if isinstance(w, widgets.HTML))


@pytest.mark.parametrize(("press", "answer"), [
    ("Allow once", "allow-once"), ("Always allow `pip install requests`", "always-allow"),
    ("Deny", "deny")])
async def test_each_button_gives_its_answer(press: str, answer: str) -> None:
    box = widgets.VBox()
    asked = asyncio.ensure_future(approve_in_box(box, PIP, 5.0))
    await asyncio.sleep(0)
    buttons = _buttons(box)
    assert list(buttons) == ["Allow once", "Always allow `pip install requests`", "Deny"]
    assert "<pre>pip install requests</pre>" in _texts(box)
    buttons[press].click()
    assert await asked == answer
    assert all(b.disabled for b in buttons.values())


async def test_an_edit_shows_its_diff_escaped_and_no_always_allow() -> None:
    box = widgets.VBox()
    asked = asyncio.ensure_future(approve_in_box(box, EDIT, 5.0))
    await asyncio.sleep(0)
    assert list(_buttons(box)) == ["Allow once", "Deny"]
    assert "+&lt;new&gt;" in _texts(box)
    _buttons(box)["Deny"].click()
    assert await asked == "deny"


async def test_no_answer_in_time_raises_and_a_plain_view_cannot_ask() -> None:
    with pytest.raises(TimeoutError):
        await approve_in_box(widgets.VBox(), PIP, 0.01)
    approver = ViewApprover()
    approver.view = object()
    with pytest.raises(RuntimeError):
        await approver(PIP, 1.0)
