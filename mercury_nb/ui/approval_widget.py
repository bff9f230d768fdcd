"""The cell's approval: the exact command (or the diff) with Allow once, Always allow, Deny.
"""

from __future__ import annotations

import asyncio
import html
from typing import Any

import ipywidgets as widgets

from mercury_nb.contract.permissions import ApprovalAnswer, ApprovalRequest

ALLOW_ONCE = "Allow once"
ALWAYS_ALLOW = "Always allow `{rule}`"
DENY = "Deny"


def approval_widgets(request: ApprovalRequest
                     ) -> tuple[widgets.VBox, dict[ApprovalAnswer, widgets.Button]]:
    """The widgets of one approval; every text is escaped or set as a plain value."""
    title = widgets.HTML(value=f"<b>mercury asks permission to {html.escape(request.what)}</b>")
    shown = request.command or request.detail
    parts: list[widgets.Widget] = [title]
    if shown:
        parts.append(widgets.HTML(value=f"<pre>{html.escape(shown)}</pre>"))
    if request.command and request.detail:
        parts.append(widgets.HTML(value=f"<pre>{html.escape(request.detail)}</pre>"))
    buttons: dict[ApprovalAnswer, widgets.Button] = {
        "allow-once": widgets.Button(description=ALLOW_ONCE, button_style="primary")}
    if request.suggested_rule is not None:
        always = ALWAYS_ALLOW.format(rule=request.suggested_rule)
        buttons["always-allow"] = widgets.Button(  # as wide as its rule: the user reads it
            description=always, tooltip=always,
            layout=widgets.Layout(width="auto", max_width="100%"))
    buttons["deny"] = widgets.Button(description=DENY, button_style="danger")
    parts.append(widgets.HBox(list(buttons.values()),
                              layout=widgets.Layout(flex_flow="row wrap")))
    return widgets.VBox(parts), buttons


async def approve_in_box(box: widgets.VBox, request: ApprovalRequest,
                         timeout_s: float) -> ApprovalAnswer:
    """Show the approval inside ``box`` and wait for a button (``TimeoutError`` after
    ``timeout_s``: the caller denies)."""
    panel, buttons = approval_widgets(request)
    answered: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()

    def pressed(answer: ApprovalAnswer) -> Any:
        def on_click(_button: widgets.Button) -> None:
            if not answered.done():
                answered.set_result(answer)
        return on_click

    for answer, button in buttons.items():
        button.on_click(pressed(answer))
    box.children = (*box.children, panel)
    try:
        return await asyncio.wait_for(asyncio.shield(answered), timeout_s)
    finally:
        for button in buttons.values():
            button.disabled = True
