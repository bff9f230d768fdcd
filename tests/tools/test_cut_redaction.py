"""Keys planted across every cut of the kernel tools' results are masked whole (issue 18, 5)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd
import pytest

from mercury_nb.contract.text_cut import CUT_REACH
from mercury_nb.tools.frame_summary import CELL_CHARS
from mercury_nb.tools.kernel_code import BoundedText
from mercury_nb.tools.kernel_tools import describe_display
from mercury_nb.tools.value_summary import SummaryLimits
from mercury_nb.tools.variables import summarize_namespace

KEY = "sk-Zq9XwYvUtS8rQpOnMlK7jIhGfEdCbA6zyxwvut"
"""A key-shaped token: any 3 characters of its body seen in a result is a leak."""
SECRET = "hunter2-Qm4Lb8Nc6Vx2Rz0Tk9"
"""A known secret (an env value) of no key shape: only the secrets list masks it."""
REPR = 60
KEEP = 40


def _namespace(value: object) -> str:
    limits = SummaryLimits(repr_chars=REPR, head_rows=3, max_columns=5)
    return summarize_namespace({"v": value}, limits=limits, secrets=(SECRET,)).text


def _at(cut: int, planted: str, at: int) -> str:
    """Filler with ``planted`` starting ``at`` characters before the cut at ``cut`` (after a
    space: a token glued to a word is no token, cut or not)."""
    return "x" * (cut - at - 1) + " " + planted + " tail"


def _stream(planted: str, at: int) -> str:
    out = BoundedText(KEEP)
    out.write("y" * (KEEP - at - 1) + " ")
    out.write(planted)
    out.write(" " + "z" * (3 * KEEP))
    return out.text((SECRET,))


def _stream_tail(planted: str, at: int, before: int = 4 * KEEP) -> str:
    """The tail's cut: the key starts ``len(planted) - at`` characters before it, so only
    its last ``at`` characters lie inside the kept tail."""
    out = BoundedText(KEEP)
    out.write("y" * before + " ")
    out.write(planted)
    out.write("z" * (KEEP - at))
    return out.text((SECRET,))


PATHS: dict[str, Callable[[str, int], str]] = {
    "str repr": lambda planted, at: _namespace(_at(REPR, planted, at)),
    "list item": lambda planted, at: _namespace(["a", _at(REPR - 7, planted, at)]),
    "dict value": lambda planted, at: _namespace({"k": _at(REPR - 8, planted, at)}),
    "frame cell": lambda planted, at: _namespace(
        pd.DataFrame({"c": [_at(CELL_CHARS, planted, at)]})),
    "frame column": lambda planted, at: _namespace(
        pd.DataFrame({_at(CELL_CHARS, planted, at): [1]})),
    "series value": lambda planted, at: _namespace(pd.Series([_at(CELL_CHARS, planted, at)])),
    "display": lambda planted, at: describe_display(
        {"text/plain": _at(REPR, planted, at)}, REPR, (SECRET,)),
    "stdout head": _stream,
    "stdout tail": _stream_tail,
    "stdout tail, long": lambda planted, at: _stream_tail(planted, at, 4 * CUT_REACH),
}


@pytest.mark.parametrize("planted", [KEY, SECRET], ids=["key-shaped", "known secret"])
@pytest.mark.parametrize("at", [1, 3, 6, 10])
@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_key_across_a_cut_is_masked_whole(path: str, at: int, planted: str) -> None:
    shown = re.sub(r"\[… [\d,]+ characters cut …\]", "[cut]", PATHS[path](planted, at))
    body = planted.removeprefix("sk-")
    pieces = {body[i:i + 3] for i in range(len(body) - 2)}
    leaked = sorted(piece for piece in pieces if piece in shown)
    assert not leaked, f"{path}: {leaked} of the key in {shown!r}"
    assert "…" in shown or "[cut]" in shown  # the cut was there


def test_a_short_text_is_shown_whole_and_still_redacted() -> None:
    assert "x1y2" in _namespace("x1y2")
    assert KEY[5:] not in _namespace(KEY)
    out = BoundedText(KEEP)
    out.write(f"a {SECRET} b")
    assert out.text((SECRET,)) == "a *** b"
