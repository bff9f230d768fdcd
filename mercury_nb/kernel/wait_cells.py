"""The ``%%mercury`` input transformers: ``--wait`` cells become a top-level await, and a
``--help`` cell with no body shows the help.

IPython rewrites a cell magic cell into ``get_ipython().run_cell_magic(name, line, body)``
and does not await what the magic returns. This post transformer prefixes that call with
``await`` when the line asks to wait, so the cell itself awaits the task (see
:mod:`mercury_nb.kernel.scheduling` for why this beats the alternatives). IPython also
refuses a cell magic with an empty body before the magic runs, so a lone
``%%mercury --help`` cell is turned into the line magic ``%mercury --help``, which prints it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any


def can_await_cells(shell: Any) -> bool:
    """Whether cells may use top-level ``await`` on asyncio in this shell."""
    autoawait = bool(getattr(shell, "autoawait", False))
    return autoawait and str(getattr(shell, "loop_runner", "")) == "asyncio"


def magic_line_of(source: str, magic_name: str) -> str | None:
    """The argument line if ``source`` is exactly one call of cell magic ``magic_name``."""
    found = magic_call_of(source, magic_name)
    return None if found is None else found[0]


def magic_call_of(source: str, magic_name: str) -> tuple[str, str] | None:
    """``(line, body)`` if ``source`` is exactly one call of cell magic ``magic_name``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    call = tree.body[0].value
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "run_cell_magic"
        and isinstance(call.func.value, ast.Call)
        and isinstance(call.func.value.func, ast.Name)
        and call.func.value.func.id == "get_ipython"
        and len(call.args) == 3
    ):
        return None
    texts = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if len(texts) != 3:
        return None
    name, line, body = texts
    return (line, body) if name == magic_name else None


class WaitCellTransformer:
    """Post input transformer (``shell.input_transformers_post``) for one cell magic.

    ``wants_wait(line)`` decides from the magic's argument line; lines that do not parse are
    left alone, so the magic itself reports the usage error.
    """

    def __init__(self, shell: Any, magic_name: str, wants_wait: Callable[[str], bool]) -> None:
        self.shell = shell
        self.magic_name = magic_name
        self.wants_wait = wants_wait

    def __call__(self, lines: list[str]) -> list[str]:
        source = "".join(lines)
        if "run_cell_magic" not in source or not can_await_cells(self.shell):
            return lines
        line = magic_line_of(source, self.magic_name)
        if line is None or not self.wants_wait(line):
            return lines
        return ["await " + source.lstrip()]


class HelpCellTransformer:
    """Post input transformer: a ``magic_name`` cell whose line ``asks_for_help`` and whose
    body is empty runs the line magic of the same name with that line instead."""

    def __init__(self, magic_name: str, asks_for_help: Callable[[str], bool]) -> None:
        self.magic_name = magic_name
        self.asks_for_help = asks_for_help

    def __call__(self, lines: list[str]) -> list[str]:
        source = "".join(lines)
        if "run_cell_magic" not in source:
            return lines
        found = magic_call_of(source, self.magic_name)
        if found is None or found[1].strip() or not self.asks_for_help(found[0]):
            return lines
        return [f"get_ipython().run_line_magic({self.magic_name!r}, {found[0]!r})\n"]
