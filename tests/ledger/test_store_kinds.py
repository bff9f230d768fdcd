"""The store writes event kinds from the event classes and the ledger's own constants only."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import get_args

import mercury_nb.ledger.store as store
from mercury_nb.agent.events import AGENT_EVENT_KINDS
from mercury_nb.ledger.records import LedgerKind

KINDS = frozenset(AGENT_EVENT_KINDS) | frozenset(get_args(LedgerKind))


def test_no_kind_is_written_by_hand_in_the_store() -> None:
    source = ast.parse(Path(store.__file__).read_text())
    texts = [node.value for node in ast.walk(source)
             if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    named = sorted({kind for text in texts for kind in KINDS
                    if text == kind or f"'{kind}'" in text})
    assert named == []


def test_the_store_still_imports_light() -> None:
    """Taking the kinds from the event classes leaves the store free of pydantic at import
    (the extension opens the ledger while it loads)."""
    code = ("import sys, mercury_nb.ledger.access; "
            "print(sorted({'pydantic', 'mercury_nb.agent.events'} & set(sys.modules)))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True)
    assert shown.stdout.strip() == "[]"
