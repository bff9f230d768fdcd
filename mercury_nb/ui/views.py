"""Builds and displays a task's view in the current cell (a widget or plain text), its approver."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from typing import Any

from mercury_nb.agent.events import AgentEvent
from mercury_nb.contract.permissions import ApprovalAnswer, ApprovalRequest
from mercury_nb.ui.live import RunView, kind_for_shell


def make_view(
    shell: Any, *, max_updates_per_s: float, attached: bool, model: str = ""
) -> RunView:
    """Build and display the view for one task in the current cell; ``model`` (the first of
    the chain) is shown from the first frame, so every cell starts with the same line."""
    if kind_for_shell(shell) == "widget":
        from mercury_nb.ui.widgets import WidgetView  # ipywidgets only when needed

        return WidgetView(max_updates_per_s=max_updates_per_s, attached=attached, model=model)
    from mercury_nb.ui.plain import PlainView

    return PlainView(max_updates_per_s=max_updates_per_s, attached=attached, model=model)


def guarded_sink(view: RunView) -> Callable[[AgentEvent], None]:
    """The view's event sink; a failing view reports once and never breaks the agent loop."""
    failed = False

    def sink(event: AgentEvent) -> None:
        nonlocal failed
        if failed:
            return
        try:
            view.on_event(event)
        except Exception:
            failed = True
            text = "mercury: the live view failed; the task goes on.\n" + traceback.format_exc()
            try:
                view.show_error(text)
            except Exception:
                print(text, file=sys.stderr)

    return sink


class ViewApprover:
    """The approver a ``%%mercury`` cell hands to the runs layer: it asks through ``view``
    (set once the cell's view is built) when that view has buttons; a plain-text view
    cannot ask, so it raises and the permission edge denies (fails closed)."""

    def __init__(self) -> None:
        self.view: Any = None

    async def __call__(self, request: ApprovalRequest, timeout_s: float) -> ApprovalAnswer:
        approve = getattr(self.view, "approve", None)
        if approve is None:
            raise RuntimeError("this view cannot ask (plain text)")
        answer: ApprovalAnswer = await approve(request, timeout_s)
        return answer
