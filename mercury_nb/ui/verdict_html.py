"""The verdict as HTML: the sanitized answer, the banner and each changed file's preview
(a notebook cell by cell, a text file's diff lines coloured), everything escaped."""

from __future__ import annotations

import html

from mercury_nb.contract.change_lines import change_line
from mercury_nb.contract.notebook_changes import CellChange
from mercury_nb.contract.outcome import FileChange, TaskOutcome
from mercury_nb.contract.task_status import EndingStatus
from mercury_nb.contract.untrusted import one_line, shown_name
from mercury_nb.ui.markdown import markdown_html
from mercury_nb.ui.status import footer

_STATUS_COLOURS: dict[EndingStatus, str] = {
    "completed": "#2e7d32",
    "paused": "#b26a00",
    "failed": "#c62828",
    "aborted": "#616161",
}
UNGROUNDED_COLOUR = "#b26a00"
"""The banner's edge when the answer talks about files the task never read."""


def esc(text: str) -> str:
    """``text`` escaped for HTML, quotes included."""
    return html.escape(text, quote=True)


def change_html(change: FileChange) -> str:
    """One changed file as a collapsible ``<details>`` with its preview; all text escaped,
    the path shown by :func:`shown_name` (on one line, quoted when it needs to be)."""
    summary = (
        f"{esc(shown_name(change.path))} <span>+{change.added} −{change.removed}</span>"
        f" ({esc(change.kind)})"
    )
    if not change.preview:
        return f'<div class="mercury-change">{summary}</div>'
    lines = _preview_lines(change)
    return (
        f'<details class="mercury-change"><summary>{summary}</summary>'
        f'<pre style="margin:2px 0 6px 1em">{lines}</pre></details>'
    )


_COLOURS = {"+": "background:rgba(46,160,67,0.18)", "-": "background:rgba(248,81,73,0.18)"}


def _coloured(op: str, text: str) -> str:
    style = _COLOURS.get(op)
    return f'<span style="{style}">{esc(text)}</span>' if style else esc(text)


def _diff_line(line: str) -> str:
    """A unified-diff line, escaped, green when it adds and red when it removes."""
    return _coloured(line[:1], line)


def _cell_line(cell: CellChange) -> str:
    """One changed cell on one line: where it is, what happened, its first changed line."""
    if cell.kind == "removed":
        head, op = f"was cell {cell.number}, removed ({cell.cell_type})", "-"
    else:
        head = f"cell {cell.number} {'added' if cell.kind == 'added' else 'changed'}"
        head, op = f"{head} ({cell.cell_type})", "+" if cell.kind == "added" else ""
    first = next((ln for ln in cell.source if ln.op in ("+", "-")), None)
    shown = _coloured(op, one_line(head))
    if first is not None:
        shown += ": " + _coloured(first.op, one_line(first.op + first.text)[:120])
    elif cell.outputs:
        shown += ": " + esc(one_line(cell.outputs))
    return shown


def _preview_lines(change: FileChange) -> str:
    """A change's preview as escaped HTML lines: a notebook's cells one per line, a text
    file's diff lines coloured by their + or − mark."""
    if change.notebook is not None:
        lines = "\n".join(_cell_line(cell) for cell in change.notebook.cells)
        if change.notebook.more_cells:
            lines += f"\n… {change.notebook.more_cells} more changed cell(s)"
        return lines or esc(change.preview)
    # the preview's diff lines, each marked + or − by _preview in workspace/changes.py
    return "\n".join(_diff_line(line) for line in change.preview.split("\n"))


def _banner_body(outcome: TaskOutcome) -> tuple[str, list[FileChange]]:
    """The banner's lines as HTML, each changed file once: a file the banner lists with a
    preview is that line as a collapsible ``<details>``; returns the changes it did not list."""
    previews = {change_line(change): change for change in outcome.changes if change.preview}
    listed = {change_line(change) for change in outcome.changes}
    parts: list[str] = []
    text: list[str] = []
    for line in outcome.banner.split("\n"):
        change = previews.get(line.strip())
        if change is None:
            text.append(line)
            continue
        if text:
            parts.append(f"<div>{esc(chr(10).join(text))}</div>")
            text = []
        parts.append(
            f'<details class="mercury-change"><summary>{esc(line)}</summary>'
            f'<pre style="margin:2px 0 6px 1em;font-weight:400">{_preview_lines(change)}</pre>'
            "</details>")
    if text:
        parts.append(f"<div>{esc(chr(10).join(text))}</div>")
    in_banner = {line.strip() for line in outcome.banner.split("\n")} & listed
    rest = [change for change in outcome.changes if change_line(change) not in in_banner]
    return "".join(parts), rest


def banner_html(outcome: TaskOutcome) -> str:
    """The final verdict as HTML: the answer (Markdown, sanitized), the banner with each
    changed file once (its preview collapsible), its footer (steps, tokens, cost), all
    escaped. Nothing from the model or the disk reaches the page unsanitized."""
    colour = _STATUS_COLOURS.get(outcome.status, "#616161")
    if outcome.unread:  # an answer about files it never read is delivered, with a warning
        colour = UNGROUNDED_COLOUR
    parts = [f'<div class="mercury-outcome mercury-{esc(outcome.status)}">']
    if outcome.answer and outcome.answer.strip():
        parts.append(  # labelled and framed: no line of it can pass for the banner's
            '<div class="mercury-answer-label" style="font-size:85%;color:#757575">'
            "The model's answer:</div>"
            '<div class="mercury-answer" style="margin-bottom:6px;line-height:1.5;'
            'border-left:3px dotted #9e9e9e;padding:2px 8px;font-weight:normal">'
            f"{markdown_html(outcome.answer.strip())}</div>"
        )
    body, rest = _banner_body(outcome)
    parts.append(
        '<div class="mercury-banner" style="white-space:pre-wrap;font-weight:600;line-height:1.5;'
        f'border-left:4px solid {colour};padding:4px 8px">{body}</div>'
    )
    parts.extend(change_html(change) for change in rest)
    below = footer(outcome)
    if below:
        parts.append('<div class="mercury-footer" style="font-family:monospace;color:#616161;'
                     f'margin-top:2px">{esc(below)}</div>')
    parts.append("</div>")
    return "".join(parts)
