"""One name, one thing: no public top-level name is defined by two product modules."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import mercury_nb

PACKAGE = Path(mercury_nb.__file__).parent

SAME_ROLE = {
    "main": "each module's command-line entry point",
    "register": "each registry's own add (kernel magics, processes)",
    "stream_chunks": "each transport's implementation of the one stream protocol",
}
"""Names two modules define for the same role; every other name is defined once."""


def defined_names() -> dict[str, list[str]]:
    """Every public top-level function and class of the product, with the modules that
    define it (``mercury_nb.testing`` is not the product)."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] == "testing":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            named = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            if named and not node.name.startswith("_") and not overload(node):
                found[node.name].append(str(relative))
    return found


def overload(node: ast.stmt) -> bool:
    """A ``typing.overload`` signature (its implementation is the one definition)."""
    decorators = getattr(node, "decorator_list", [])
    return any((isinstance(d, ast.Name) and d.id == "overload")
               or (isinstance(d, ast.Attribute) and d.attr == "overload") for d in decorators)


def test_each_public_name_is_defined_once() -> None:
    doubled = {name: modules for name, modules in defined_names().items()
               if len(modules) > 1 and name not in SAME_ROLE}
    assert doubled == {}


def test_the_names_that_meant_two_things_now_mean_one() -> None:
    names = defined_names()
    for name in ("RunningTask", "Pulse", "task_detail", "run_task", "ledger_for",
                 "workspace_of", "redact", "status_of", "TaskDetail"):
        assert len(names[name]) <= 1, (name, names[name])
    assert "ShownTask" not in names  # one model of a shown task: TaskDetail
