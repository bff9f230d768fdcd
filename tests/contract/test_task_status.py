"""The task statuses are written once (contract/task_status.py); the rest takes them from it."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import get_args

import mercury_nb
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.task_status import (
    ENDING_STATUSES,
    TASK_STATUSES,
    EndingStatus,
    TaskStatus,
)
from mercury_nb.ledger.records import TaskRecord

PACKAGE = Path(mercury_nb.__file__).parent
ROOT = PACKAGE.parent
PANEL = ROOT / "labextension" / "src"
HOME = Path("contract") / "task_status.py"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "task_status_ts", ROOT / "scripts" / "task_status_ts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_statuses_are_the_ledgers_and_the_endings() -> None:
    assert (TASK_STATUSES[0], TASK_STATUSES[1:]) == ("running", ENDING_STATUSES)
    assert ENDING_STATUSES == ("completed", "paused", "failed", "aborted")
    assert get_args(TaskOutcome.model_fields["status"].annotation) == ENDING_STATUSES
    assert TaskRecord.__annotations__["status"] == "TaskStatus"
    assert set(get_args(TaskStatus)) - set(get_args(EndingStatus)) == {"running"}


def literal_copies(tree: ast.AST) -> list[int]:
    """Lines where a tuple, list, set or ``Literal[...]`` spells every task status (or every
    ending status) as string constants."""
    wanted = (set(TASK_STATUSES), set(ENDING_STATUSES))
    found = []
    for node in ast.walk(tree):
        elements: list[ast.expr] = []
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            elements = list(node.elts)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            elements = list(node.slice.elts)
        words = {e.value for e in elements
                 if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        if words in wanted:
            found.append(node.lineno)
    return found


def test_the_python_literal_is_written_once() -> None:
    copies = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = literal_copies(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            copies[str(path.relative_to(PACKAGE))] = lines
    assert list(copies) == [str(HOME)]


def test_the_scan_finds_a_copy() -> None:
    assert literal_copies(ast.parse('S = Literal["completed", "paused", "failed", "aborted"]'))
    assert literal_copies(ast.parse('S = ("running", "completed", "paused", "failed", "aborted")'))
    assert not literal_copies(ast.parse('RESUMABLE = ("paused", "failed", "aborted")'))


def test_the_panels_type_is_generated_from_the_literal_and_current() -> None:
    script = generator()
    assert (PANEL / "status.ts").read_text(encoding="utf-8") == script.render(TASK_STATUSES)
    assert script.main(["--check"]) == 0


def test_the_generated_union_parses_back_to_the_literal() -> None:
    text = (PANEL / "status.ts").read_text(encoding="utf-8")
    union = re.search(r"export type Status =([^;]*);", text)
    assert union is not None
    assert tuple(re.findall(r"'([a-z-]+)'", union.group(1))) == TASK_STATUSES


def test_no_other_panel_source_spells_the_statuses() -> None:
    word = "|".join(TASK_STATUSES)
    run = re.compile(rf"(?:'(?:{word})'[\s,|]*){{3,}}")
    spelled = [path.name for path in sorted(PANEL.glob("*.ts*"))
               if path.name != "status.ts" and run.search(path.read_text(encoding="utf-8"))]
    assert spelled == []


def test_the_ledgers_published_check_allows_exactly_these_statuses() -> None:
    """The schema's first migration is published (never edited), so it keeps its own SQL;
    it must allow exactly the statuses the Literal names."""
    schema = (PACKAGE / "ledger" / "schema.py").read_text(encoding="utf-8")
    check = re.search(r"CHECK \(status IN \(([^)]*)\)\)", schema)
    assert check is not None
    assert tuple(re.findall(r"'([a-z]+)'", check.group(1))) == TASK_STATUSES
