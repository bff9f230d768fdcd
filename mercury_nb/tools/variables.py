"""The user's namespace as text for the model: which variables, each one's safe summary,
bounded and redacted; and the ``@name`` mentions of a task's text.

Pure over the mapping it is given (the kernel front end injects the namespace through the
runs layer): :func:`summarize_namespace` is what ``inspect_variables`` returns and what
``@name`` attaches to a task's first request. It leaves out names starting with ``_``, the
kernel's own names, modules and the agent's own objects; it describes a value only through
:mod:`~mercury_nb.tools.value_summary` (no code of the value's type runs); a variable whose
name is secret-like (``api_key``, ``*_token``…) shows ``***``, and every text goes through
the one redaction (a key-looking string shows ``***`` too).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.redaction import MASK, is_secret_name, redact
from mercury_nb.tools.value_summary import (
    SummaryLimits,
    ValueSummary,
    is_module,
    summarize_value,
    type_name,
)

NO_KERNEL = ("the variables of a kernel are only available from a %%mercury cell; "
             "this task runs without one")
"""What ``@name`` gets where there is no kernel (the CLI, the panel, the library call)."""

UNKNOWN_NAME = "there is no variable named {name} in your kernel"
"""What an ``@name`` the kernel does not have gets."""

MENTION = re.compile(r"(?<![\w@.])@([A-Za-z_][A-Za-z0-9_]*)(?![\w(]|\.\w)")
"""``@df`` in a task's text; not an address (``me@host``), a decorator call or a dotted
name (``@dataclass(...)``, ``@pytest.fixture``)."""

OWN_MODULES = ("mercury_nb",)
"""Packages whose objects are the agent's own (a task handle, a view): never listed."""

UNSHOWN = "(not a known type: only its type is shown)"
MORE = ("… {count} more not shown (the summary's budget): {names}. "
        "Ask inspect_variables for them by name.")
TRAILER_ROOM = 400
"""Characters kept for the line naming the variables the budget left out."""


@dataclass(frozen=True)
class NamespaceReport:
    """The summary text, the variables it describes, the asked names it does not have."""

    text: str
    shown: tuple[str, ...]
    missing: tuple[str, ...] = ()


def limits_of(config: MercuryConfig) -> SummaryLimits:
    return SummaryLimits(repr_chars=config.kernel_repr_chars, head_rows=config.kernel_head_rows,
                         max_columns=config.kernel_max_columns)


def mentions(text: str) -> tuple[str, ...]:
    """The ``@name`` mentions of ``text``, each once, in order."""
    return tuple(dict.fromkeys(match.group(1) for match in MENTION.finditer(text)))


def is_own(name: str, value: Any, hidden: frozenset[str]) -> bool:
    """Whether ``name`` is left out of a listing: ``_``-names, the kernel's own names,
    modules, the agent's own objects."""
    if name.startswith("_") or name in hidden or is_module(value):
        return True
    return type_name(type(value)).split(".")[0] in OWN_MODULES


def listed_names(namespace: Mapping[str, Any], hidden: frozenset[str]) -> list[str]:
    """The user's variables, in the namespace's order."""
    return [name for name, value in list(namespace.items())
            if isinstance(name, str) and not is_own(name, value, hidden)]


def describe(name: str, summary: ValueSummary) -> str:
    """``df: pandas.DataFrame · shape (3, 2)`` with its detail lines below, indented."""
    head = [f"{name}: {summary.type_name}"]
    head.extend(part for part in (summary.size, f"dtype {summary.dtype}" if summary.dtype else "")
                if part)
    line = " · ".join(head)
    if summary.repr:
        line += f" = {summary.repr}"
    elif not summary.details and not summary.size:
        line += f" {UNSHOWN}"
    return "\n".join([line, *(f"  {detail}" for detail in summary.details)])


def describe_variable(name: str, value: Any, limits: SummaryLimits) -> str:
    """One variable's entry; a secret-like name shows only its type and ``***``."""
    if is_secret_name(name):
        return f"{name} = {MASK} ({type_name(type(value))})"  # never `NAME: x`: redaction
    return describe(name, summarize_value(value, limits))


def summarize_namespace(namespace: Mapping[str, Any], *, hidden: frozenset[str] = frozenset(),
                        names: Sequence[str] | None = None,
                        limits: SummaryLimits | None = None,
                        secrets: Iterable[str] = (), max_chars: int = 12_000) -> NamespaceReport:
    """The summaries of ``names`` (None: every listed variable) in at most ``max_chars``
    characters, redacted; what the budget leaves out is named at the end."""
    kept_secrets = tuple(secrets)
    limits = replace(limits or SummaryLimits(), secrets=kept_secrets)  # masked before cuts
    if names is None:
        wanted = listed_names(namespace, hidden)
        missing: list[str] = []
    else:
        wanted, missing = [], []
        for name in dict.fromkeys(names):
            present = name in namespace and name not in hidden
            if present and not is_own("v", namespace[name], frozenset()):  # `_x` if asked
                wanted.append(name)
            else:
                missing.append(name)
    entries: list[str] = []
    used = 0
    budget = max(0, max_chars - TRAILER_ROOM)
    for index, name in enumerate(wanted):
        entry = redact(describe_variable(name, namespace[name], limits), kept_secrets)
        if used + len(entry) + 1 > budget:
            if not entries:  # one variable alone is over the budget: its head
                entries.append(entry[: max(0, budget - 1)] + "…")
                index += 1
            return _report(entries, wanted, index, missing, max_chars)
        entries.append(entry)
        used += len(entry) + 1
    return _report(entries, wanted, len(wanted), missing, max_chars)


def _report(entries: list[str], wanted: list[str], shown: int, missing: list[str],
            max_chars: int) -> NamespaceReport:
    lines = list(entries)
    left = wanted[shown:]
    if left:
        listed = ", ".join(left)
        room = max(40, TRAILER_ROOM - len(MORE))
        if len(listed) > room:
            listed = listed[: room - 1].rsplit(",", 1)[0] + ", …"
        lines.append(MORE.format(count=len(left), names=listed))
    lines.extend(UNKNOWN_NAME.format(name=name) for name in missing)
    text = "\n".join(lines)[:max_chars]
    return NamespaceReport(text, tuple(wanted[:shown]), tuple(missing))


def namespace_heading(report: NamespaceReport, total: int) -> str:
    """The first line of an ``inspect_variables`` result."""
    if not total:
        return "Your kernel has no variables yet (modules and IPython's own names aside)."
    return f"{total} variable{'s' if total != 1 else ''} in your kernel:"
