"""The sanitizer's multi-line strength: lines stay lines, nothing else draws."""

from __future__ import annotations

import pytest

from mercury_nb.contract.untrusted import shown_lines


@pytest.mark.parametrize(("text", "shown"), [
    ("--- a/x\n+++ b/x\n-old\n+new", "--- a/x\n+++ b/x\n-old\n+new"),
    ("ok \x1b[2K\r evil", "ok \\x1b[2K\\r evil"),
    ("a\u202eb\nc\td", "a\\u202eb\nc\\td"),
    ("bad\udcffname", "bad\\xffname"),
])
def test_shown_lines(text: str, shown: str) -> None:
    assert shown_lines(text) == shown
