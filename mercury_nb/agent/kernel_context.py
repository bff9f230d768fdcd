"""``@name`` in a task's text: the named variables' summaries attached to its first request.

A task from a ``%%mercury`` cell has the user's kernel: each ``@name`` it has is described
(the same bounded, redacted summary ``inspect_variables`` gives) in the first user message,
and the widget's start line names them. An ``@name`` the kernel lacks, or any ``@name`` of
a task with no kernel (the CLI, the panel), gets a note, shown to the user and told to the
model, instead of a silent guess.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.tools.kernel_access import KernelAccess, kernel_secrets
from mercury_nb.tools.variables import (
    NO_KERNEL,
    UNKNOWN_NAME,
    limits_of,
    mentions,
    summarize_namespace,
)

ATTACHED_HEADING = "Variables from the user's kernel, attached for {names}:"
ASKED_FROM = ("This task was asked from the %%mercury cell with id {cell} of the notebook "
              "{notebook}: \"this notebook\" is that notebook, and \"below this cell\" is "
              "insert_notebook_cell with after_cell_id=\"{cell}\".")
ASKED_FROM_NOTEBOOK = "This task was asked from a cell of the notebook {notebook}."


@dataclass(frozen=True)
class Attachments:
    """What ``@name`` adds: text for the first request, the names attached, the notes."""

    text: str = ""
    attached: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def attachments(task: str, kernel: KernelAccess | None, config: MercuryConfig) -> Attachments:
    """The summaries of the variables ``task`` mentions (``@df``), within the config's
    summary budget, and a note for each it cannot attach."""
    named = mentions(task)
    if not named:
        return Attachments()
    if kernel is None:
        listed = ", ".join(f"@{name}" for name in named)
        return Attachments(notes=(f"{listed}: {NO_KERNEL}.",))
    report = summarize_namespace(
        kernel.namespace(), hidden=kernel.hidden_names(), names=named,
        limits=limits_of(config), secrets=kernel_secrets(config, kernel),
        max_chars=config.kernel_summary_max_chars)
    notes = tuple(f"@{name}: {UNKNOWN_NAME.format(name=name)}." for name in report.missing)
    if not report.shown:
        return Attachments(notes=notes)
    found = ", ".join(f"@{name}" for name in report.shown)
    entries = "\n".join(line for line in report.text.splitlines()
                        if not any(line == UNKNOWN_NAME.format(name=n) for n in report.missing))
    return Attachments(f"{ATTACHED_HEADING.format(names=found)}\n{entries}", report.shown, notes)


def origin_text(kernel: KernelAccess | None, root: Path) -> str:
    """Where the task was asked from, for the first request ("" when the kernel does not say
    which notebook): the notebook relative to the workspace ``root`` when it is inside it,
    and the asking cell's id."""
    origin = kernel.origin() if kernel is not None else None
    if origin is None or not origin.notebook:
        return ""
    notebook = origin.notebook
    for candidate in (Path(notebook), Path.cwd() / notebook):
        with suppress(OSError, ValueError):
            if (candidate.is_absolute() and candidate.exists()
                    and candidate.resolve().is_relative_to(root.resolve())):
                notebook = candidate.resolve().relative_to(root.resolve()).as_posix()
                break
    if origin.cell_id is None:
        return ASKED_FROM_NOTEBOOK.format(notebook=notebook)
    return ASKED_FROM.format(cell=origin.cell_id, notebook=notebook)


def first_request_text(task: str, found: Attachments, origin: str = "") -> str:
    """The first user message: the task, where it was asked from, then the attached
    summaries and the notes."""
    parts = [task]
    if origin:
        parts.append(origin)
    if found.text:
        parts.append(found.text)
    if found.notes:
        parts.append("\n".join(f"Note: {note}" for note in found.notes))
    return "\n\n".join(parts)
