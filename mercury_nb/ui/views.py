"""Builds and displays a task's view in the current cell: a widget, or plain text."""

from __future__ import annotations

from typing import Any

from mercury_nb.ui.live import RunView, kind_for_shell


def make_view(shell: Any, *, max_updates_per_s: float, attached: bool) -> RunView:
    """Build and display the view for one task in the current cell."""
    if kind_for_shell(shell) == "widget":
        from mercury_nb.ui.widgets import WidgetView  # ipywidgets only when needed

        return WidgetView(max_updates_per_s=max_updates_per_s, attached=attached)
    from mercury_nb.ui.plain import PlainView

    return PlainView(max_updates_per_s=max_updates_per_s, attached=attached)
