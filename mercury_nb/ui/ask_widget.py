"""The ask_user widget: the question, the options with the recommended one preselected, Confirm."""

from __future__ import annotations

import asyncio
import contextlib
import html

import ipywidgets as widgets


def question_widgets(
    question: str, options: list[str], recommended: str
) -> tuple[widgets.VBox, widgets.RadioButtons, widgets.Button]:
    """The widgets for one question; every text is escaped or set as a plain value."""
    title = widgets.HTML(value=f"<b>{html.escape(question)}</b>")
    choice = widgets.RadioButtons(options=list(options), value=recommended)
    confirm = widgets.Button(description="Confirm", button_style="primary", icon="check")
    return widgets.VBox([title, choice, confirm]), choice, confirm


async def ask_in_box(
    box: widgets.VBox, question: str, options: list[str], recommended: str, timeout_s: float
) -> str | None:
    """Show the question inside ``box`` and wait for Confirm, or ``timeout_s`` (None)."""
    panel, choice, confirm = question_widgets(question, options, recommended)
    answered: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def on_confirm(_button: widgets.Button) -> None:
        if not answered.done():
            answered.set_result(str(choice.value))

    confirm.on_click(on_confirm)
    box.children = (*box.children, panel)
    try:
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(asyncio.shield(answered), timeout_s)
        return None
    finally:
        choice.disabled = True
        confirm.disabled = True
