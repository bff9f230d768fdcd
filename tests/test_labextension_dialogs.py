"""Every dialog of the panel goes through labextension/src/dialogs.ts, whose default
(focused, picked by Enter) answer is the safe one; tests/browser/test_review.py checks the
focus in Chromium."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "labextension" / "src"
DIALOG_CALLS = re.compile(r"\bshowDialog\b|\bnew Dialog\b|\bDialog\.(?:okButton|warnButton|"
                          r"cancelButton|createButton)\b|\bInputDialog\b|\bwindow\.confirm\b")


def test_no_module_but_dialogs_ts_opens_a_dialog() -> None:
    sources = sorted(SRC.glob("*.ts*"))
    assert sources, f"no TypeScript under {SRC}"
    opening = [p.name for p in sources
               if p.name != "dialogs.ts" and DIALOG_CALLS.search(p.read_text(encoding="utf-8"))]
    assert opening == [], f"dialogs outside dialogs.ts (use askSafely): {opening}"


def test_the_one_dialog_puts_the_safe_answer_first_and_makes_it_the_default() -> None:
    text = (SRC / "dialogs.ts").read_text(encoding="utf-8")
    buttons = re.search(r"buttons:\s*\[(.*?)\]", text, re.S)
    assert buttons is not None
    kinds = re.findall(r"Dialog\.(\w+)\(\{\s*label:\s*question\.(\w+)", buttons.group(1))
    assert kinds == [("cancelButton", "safe"), ("warnButton", "risky")]
    assert re.search(r"defaultButton:\s*0\b", text)
    assert len(re.findall(r"\bshowDialog\(", text)) == 1
