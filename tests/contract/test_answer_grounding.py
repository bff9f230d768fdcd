"""Grounded answers, pure parts: names in prose, what is read, the message, the unread notice."""

from __future__ import annotations

import pytest

from mercury_nb.contract.answer_grounding import (
    MIN_CHARS_EACH,
    GroundingRead,
    GroundingSkip,
    Mention,
    PathFacts,
    format_answer_grounding,
    named_paths,
    plan_grounding,
    unread_files,
    unread_notice,
)
from mercury_nb.contract.banners import banner_text
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import NoChangesCompletion
from mercury_nb.contract.escalation.guard_texts import GROUNDING_HEADER

CONFIG = MercuryConfig(read_file_max_chars=10_000, answer_grounding_files=2)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Summarise README.md in one sentence.", ("README.md",)),
        ("What does src/calc.py do?", ("src/calc.py",)),
        ("Compare ./a.txt and ../b.txt", ("./a.txt", "../b.txt")),
        ("Explain `Makefile` and `docs/setup.md`", ("Makefile", "docs/setup.md")),
        ("Is notes.txt, or NOTES.txt, older?", ("notes.txt", "NOTES.txt")),
        ("README.md and README.md again", ("README.md",)),
        ("What is 2+2?", ()),
        ("What is 3.14 rounded?", ()),  # a suffix must start with a letter
        ("Where is https://example.com/page.html", ()),  # part of a URL, not a file here
        ("Say hello", ()),
        ("Summarise data.csv.", ("data.csv",)),  # the full stop ends the sentence
    ],
)
def test_named_paths(text: str, names: tuple[str, ...]) -> None:
    assert named_paths(text) == names


def _file(name: str, size: int = 100) -> PathFacts:
    return PathFacts(name, name.removeprefix("./"), "file", size)


@pytest.mark.parametrize(
    ("facts", "budget", "reads", "skipped"),
    [
        pytest.param([_file("README.md")], 6000, [("README.md", 6000)], [], id="one-file"),
        pytest.param([_file("README.md")], 50_000, [("README.md", 10_000)], [],
                     id="never-more-than-the-read-cap"),
        pytest.param([_file("a.md"), _file("b.md")], 6000, [("a.md", 3000), ("b.md", 3000)],
                     [], id="files-share-the-budget"),
        pytest.param([_file("a.md"), _file("b.md")], 600,
                     [("a.md", MIN_CHARS_EACH), ("b.md", MIN_CHARS_EACH)], [],
                     id="each-gets-a-floor"),
        pytest.param([_file("a.md"), _file("./a.md")], 6000, [("a.md", 6000)], [],
                     id="one-file-named-twice-is-read-once"),
        pytest.param([PathFacts("gone.md", "gone.md", "missing"),
                      PathFacts("../x.md", None, "outside"),
                      PathFacts("link.md", None, "outside"),
                      PathFacts("fifo.txt", "fifo.txt", "not_regular")], 6000, [], [],
                     id="missing-outside-and-non-regular-are-left-out"),
        pytest.param([_file("big.csv", 40_001)], 6000, [], ["big.csv"],
                     id="too-large-is-skipped-before-reading"),
        pytest.param([_file("big.csv", 40_000)], 6000, [("big.csv", 6000)], [],
                     id="at-the-size-limit-is-read"),
        pytest.param([_file("a.md"), _file("b.md"), _file("c.md")], 6000,
                     [("a.md", 3000), ("b.md", 3000)], ["c.md"], id="not-too-many"),
    ],
)
def test_plan_grounding(facts: list[PathFacts], budget: int, reads: list[tuple[str, int]],
                        skipped: list[str]) -> None:
    plan = plan_grounding(facts, budget, CONFIG)
    assert [(r.relative, r.chars) for r in plan.reads] == reads
    assert [s.written for s in plan.skipped] == skipped


def test_a_skipped_file_says_why() -> None:
    plan = plan_grounding([_file("big.csv", 1_000_000)], 6000, CONFIG)
    assert "1,000,000 bytes" in plan.skipped[0].why and "read_file" in plan.skipped[0].why
    assert not plan.empty


def test_the_message_is_the_guard_grounding_with_each_file_between_markers() -> None:
    text = format_answer_grounding("/work/ws", [("README.md", "# calc\nA calculator.\n")],
                                   [GroundingSkip("big.csv", "is 9 bytes")])
    lines = text.splitlines()
    assert lines[0] == GROUNDING_HEADER.format(cwd="/work/ws")
    assert lines[2:6] == ["=== file: README.md ===", "# calc", "A calculator.",
                          "=== end of README.md ==="]
    assert lines[-1] == "(not read: big.csv is 9 bytes)"
    assert GroundingRead("a", "a", 1).chars == 1


@pytest.mark.parametrize(
    ("mentions", "read", "unread"),
    [
        ([Mention("README.md", "README.md")], set(), ("README.md",)),
        ([Mention("README.md", "README.md")], {"README.md"}, ()),
        ([Mention("./README.md", "README.md")], set(), ("./README.md",)),  # as written
        ([Mention("./README.md", "README.md"), Mention("README.md", "README.md")], set(),
         ("./README.md",)),
        ([Mention("a.py", "a.py"), Mention("docs/b.md", "docs/b.md")], {"a.py"},
         ("docs/b.md",)),
        ([Mention("b.md", "b.md")], {"docs/b.md"}, ("b.md",)),  # another file of that name
        ([], set(), ()),
    ],
)
def test_unread_files(mentions: list[Mention], read: set[str], unread: tuple[str, ...]) -> None:
    assert unread_files(mentions, read) == unread


def test_the_notice_is_exact() -> None:
    assert unread_notice(("README.md",)) == "answered without reading README.md"
    assert unread_notice(("a.py", "b.md")) == "answered without reading a.py, b.md"


def test_the_no_changes_banner_carries_the_notice() -> None:
    plain = banner_text(NoChangesCompletion("git"), [])
    noted = banner_text(NoChangesCompletion("git", unread=("README.md",)), [])
    assert plain == "Response delivered · no file changes (git-verified)"
    assert noted == plain + "\nanswered without reading README.md"
