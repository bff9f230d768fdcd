"""A reply that changed nothing: an answer, or narration of work that was not done."""

from __future__ import annotations

import pytest

from mercury_nb.contract.turns.answer_reading import (
    claims_change,
    narrates,
    promises_work,
    reads_as_answer,
    substantive,
)

ANSWERS = (
    "notes/q3.md mentions the budget.",
    "The budget is mentioned in notes/q3.md (line 4: \"Q3 budget: 4k\").",
    "Two files mention it: notes/q3.md and notes/plan.md.",
    "Port 8080 is free: nothing is listening on it.",
    "Yes.",
    "No — none of the notebooks import pandas.",
    "The default timeout is 30 seconds (config.yaml, key `timeout`).",
    "I read all five files; only notes/q3.md mentions the budget.",
    "I looked through notes/ and found the budget in q3.md.",
    "I checked every notebook. None still imports the old module.",
    "Let me explain: the timeout is set in settings.py, line 12.",
    "I changed nothing. The budget is in notes/q3.md.",
    "Here is the list of skipped tests:\n- test_slow\n- test_network",
    "```\nQ3 budget: 4k\n```\nThat line is in notes/q3.md.",
    "The file that mentions the budget is q3.md. Let me know if you want more detail.",
    "Sure — notes/q3.md is the one that mentions the budget.",
    "budget.md",
)

PROMISES = (
    "I'll look through the notes folder and find it.",
    "Sure! I will create the file now.",
    "Let me check the notes folder first.",
    "OK, let's start by listing the files.",
    "I'm going to update q3.md with the new total.",
    "First, I'll read each file. Then I'll report back.",
    "Now I will run the tests.",
    "The budget is in q3.md. I'll now update its total.",
    "I need to read the files before I can answer.",
    "Alright — let me go ahead and fix that for you.",
)

CLAIMS = (
    "I've updated notes/q3.md with the new budget.",
    "I have created hello.py.",
    "I added the missing test and fixed the import.",
    "Done: I just wrote the summary to SUMMARY.md.",
    "The file has been created successfully.",
    "The budget total has now been corrected.",
    "The bug is now fixed.",
    "Here is the updated code:\n```python\nprint('hi')\n```",
    "Here’s the fixed version of parse():\n```python\ndef parse(): ...\n```",
    "We've made the changes you asked for.",
)

NOT_SUBSTANTIVE = ("", "   ", "OK.", "Done!", "Sure, will do.", "All set.", "Got it, thanks!")


@pytest.mark.parametrize("text", ANSWERS)
def test_answers_read_as_answers(text: str) -> None:
    assert not narrates(text)
    assert substantive(text)
    assert reads_as_answer(text)


@pytest.mark.parametrize("text", PROMISES)
def test_promises_of_work_are_narration(text: str) -> None:
    assert promises_work(text)
    assert narrates(text) and not reads_as_answer(text)


@pytest.mark.parametrize("text", CLAIMS)
def test_claims_of_a_change_are_narration(text: str) -> None:
    assert claims_change(text)
    assert narrates(text) and not reads_as_answer(text)


@pytest.mark.parametrize("text", NOT_SUBSTANTIVE)
def test_acknowledgements_answer_nothing(text: str) -> None:
    assert not substantive(text)
    assert not reads_as_answer(text)


@pytest.mark.parametrize("text", [
    "I'm sorry, but I can't access your files.",
    "Unfortunately the notes folder is empty.",
    "Which folder do you mean?",
    "Do you want the total or the per-file counts?",
])
def test_blockers_and_questions_are_no_answer_here(text: str) -> None:
    assert not reads_as_answer(text)


def test_code_quoted_in_a_fence_is_no_claim() -> None:
    text = "q3.md holds this:\n```\n# I've updated the budget\nI will fix it later\n```"
    assert not narrates(text)
    assert reads_as_answer(text)
