"""Task intent: explicit mode, then an anchored, word-level reading (never substrings)."""

from __future__ import annotations

import pytest

from mercury_nb.contract.gate.task_intent import (
    TaskIntent,
    classify_intent,
    looks_like_question,
    work_signals,
)

Q = TaskIntent.QUESTION
W = TaskIntent.WORK


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        # substrings of words must never turn chat into work (and forced rounds)
        pytest.param(
            "make me a workout plan based on the latest research", Q, id="latest-is-not-test"
        ),
        pytest.param("what is the address of the Eiffel Tower", Q, id="address-is-not-add"),
        pytest.param(
            "Give me an additional reason to attest to my contest entry",
            Q,
            id="additional-attest-contest",
        ),
        pytest.param("Write me a haiku about autumn", Q, id="haiku-is-chat"),
        pytest.param("Build me a training program to build muscle", Q, id="build-muscle"),
        # work
        pytest.param("Add a test for parse()", W, id="add-a-test"),
        pytest.param("Implement quicksort", W, id="coding-verb-alone"),
        pytest.param("Create a todo app in Flask", W, id="create-app"),
        pytest.param("Refactor utils.py to remove the globals", W, id="file-name"),
        pytest.param("Clean up data/sales.csv and drop empty rows", W, id="data-file"),
        pytest.param("Fix the failing build", W, id="fix"),
        pytest.param("Plot revenue by month", W, id="plot"),
        pytest.param("Write a README for this project", W, id="readme"),
        pytest.param("Rename `load_data` to `read_data` everywhere", W, id="inline-code"),
        pytest.param("Make the tests in ./tests pass", W, id="relative-path"),
        pytest.param("Can you add a test for parse()?", W, id="polite-request-is-work"),
        pytest.param("Could you please implement caching?", W, id="polite-please"),
        pytest.param("Add a test for parse()?", W, id="imperative-with-question-mark"),
        pytest.param("continue", W, id="bare-continue"),
        # questions
        pytest.param("What does parse() do?", Q, id="what-with-code"),
        pytest.param("Why is test_parse failing", Q, id="why-no-question-mark"),
        pytest.param("How do I read a CSV with pandas", Q, id="how"),
        pytest.param("Is there a bug in utils.py?", Q, id="is"),
        pytest.param("Explain the notebook", Q, id="explain"),
        pytest.param("Tell me about the project layout", Q, id="tell-me"),
        pytest.param("Describe the API", Q, id="describe"),
        pytest.param("Can you explain recursion?", Q, id="polite-explain"),
        pytest.param("Could you tell me what this function returns", Q, id="polite-tell-me"),
        pytest.param("Do you know the pandas API well", Q, id="do-you"),
        pytest.param("the function in utils.py returns None?", Q, id="trailing-question-mark"),
        pytest.param('Which file holds the config?")', Q, id="question-mark-before-closer"),
    ],
)
def test_execute_mode_intent(task: str, expected: TaskIntent) -> None:
    assert classify_intent(task, "execute") is expected


@pytest.mark.parametrize(
    "task",
    [
        pytest.param("Add a test for parse()", id="work-words"),
        pytest.param("Implement quicksort in utils.py", id="coding-verb-and-file"),
        pytest.param("what is 2 + 2", id="question"),
    ],
)
def test_chat_mode_is_always_a_question(task: str) -> None:
    assert classify_intent(task, "chat") is TaskIntent.QUESTION


@pytest.mark.parametrize(
    ("text", "signals"),
    [
        pytest.param("make me a workout plan based on the latest research", (), id="latest"),
        pytest.param("what is the address of the Eiffel Tower", (), id="address"),
        pytest.param("I'm testing my patience with the contestants", (), id="testing-contest"),
        pytest.param("Add a test for parse()", ("test", "parse()"), id="test-and-call"),
        pytest.param("fix app.py", ("fix", "app.py"), id="verb-and-file"),
    ],
)
def test_work_signals_are_whole_words(text: str, signals: tuple[str, ...]) -> None:
    assert work_signals(text) == signals


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", False, id="empty"),
        pytest.param("   ", False, id="blank"),
        pytest.param("Whatever you do, add logging", False, id="whatever-is-not-what"),
        pytest.param("Howto guide: add logging", False, id="howto-is-not-how"),
        pytest.param("Island map: draw it", False, id="island-is-not-is"),
        pytest.param("Do the refactor of utils.py", False, id="imperative-do"),
        pytest.param("Please add a test", False, id="please-imperative"),
        pytest.param("please, what time is it", True, id="please-what"),
        pytest.param("WHY does this fail", True, id="upper-case"),
        pytest.param("What’s wrong with my loop", True, id="curly-apostrophe"),
        pytest.param("Does parse() handle unicode", True, id="does"),
        pytest.param("Show me how generators work", True, id="show-me"),
        pytest.param("Can it handle unicode?", True, id="can-it"),
        pytest.param("Can you", True, id="polite-prefix-only"),
    ],
)
def test_looks_like_question(text: str, expected: bool) -> None:
    assert looks_like_question(text) is expected
