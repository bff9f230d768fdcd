"""The final reply's kind: the typed finish call first, the prose only as a fallback."""

from __future__ import annotations

import pytest

from mercury_nb.contract.turns.final_reply import (
    NO_QUESTION,
    NO_REASON,
    Blocked,
    Done,
    FinalReply,
    FinishCall,
    Question,
    answer_of,
    classify_final_reply,
)

CODE_THEN_CLAIM = (
    '```python\n# hello.py\ndef hello_world():\n    print("Hello, World!")\n\nhello_world()\n```'
    '\n\nThis will print "Hello, World!" to the console when you run `python hello.py`.'
)
SORRY_NOT_CAPABLE = (  # a small model's reply, recorded after a compaction
    "I'm sorry, I'm sorry, I'm not capable of providing a response.\n\n"
    "I'm sorry, I'm sorry, I'm not capable of providing a response.\n\n"
    "It seems like you can't do it.\n```\n```\n```\n\nThis is a great example of how you can "
    "do it.\n```"
)
SORRY_MISCOMMUNICATION = (
    "I'm sorry for the miscommunication, but the correct example is:\n\n"
    '"create_file (1 line) creates a file named "file.txt"."'
)
HAPPY_TO_HELP = "I'll be happy to help with that! What can I help you with today?"
ECHOED_TOOL_RESPONSE = "<tool_response>\ncreate_file.txt (2 lines)\n</tool_response>"
SLEEP_LESSON = (
    "sleep 300\n\n# What is a task?\n\n# A task is a reusable function that returns a new "
    "function that can be reused by other functions."
)
GLAD_YOU_CANT = (
    "I'm glad to have been able to help and it would be a great idea to implement this "
    "feature.\n\nIt seems that you can't implement it.\n\nIt's just a mistake."
)


@pytest.mark.parametrize(
    ("text", "work_done", "expected"),
    [
        # --- replies recorded from a real small model (SmolLM2-135M) ---------------------
        pytest.param(SORRY_NOT_CAPABLE, True,
                     Blocked("I'm sorry, I'm sorry, I'm not capable of providing a response."),
                     id="sorry-not-capable"),
        # borderline: it greets and asks what the task is; after a junk file was written it
        # is still no report of work, and no offer of *more* work: a question to the user
        pytest.param(HAPPY_TO_HELP, True, Question("What can I help you with today?"),
                     id="happy-to-help-what-can-i-help-with"),
        # borderline: an apology that offers an "example" instead of a report of the work
        # (the task was to create and run hello.py): it does not claim done; read as blocked
        pytest.param(SORRY_MISCOMMUNICATION, True,
                     Blocked("I'm sorry for the miscommunication, but the correct example is:"),
                     id="sorry-for-the-miscommunication"),
        # narration and echoed tool output claim nothing but are no blocker either: "done",
        # which the guard (no change) or the gate (no evidence) then refuses
        pytest.param(CODE_THEN_CLAIM, False, Done(), id="code-block-then-claim"),
        pytest.param(ECHOED_TOOL_RESPONSE, True, Done(), id="echoed-tool-response"),
        pytest.param(SLEEP_LESSON, False, Done(), id="question-in-a-heading-is-not-the-end"),
        pytest.param(GLAD_YOU_CANT, False, Done(), id="you-cant-is-not-i-cant"),
        pytest.param("2 + 2 = 4\n2 + 4 = 6", False, Done(), id="plain-answer"),
        # --- blocked -----------------------------------------------------------------------
        pytest.param("I'm sorry, I can't do that.", True, Blocked("I'm sorry, I can't do that."),
                     id="sorry-cant"),
        pytest.param("Unfortunately the package index is unreachable from here.", False,
                     Blocked("Unfortunately the package index is unreachable from here."),
                     id="unfortunately"),
        pytest.param("I cannot run commands in this workspace: run_command is disabled.", False,
                     Blocked("I cannot run commands in this workspace: run_command is disabled."),
                     id="i-cannot"),
        pytest.param("I tried three fixes. I was unable to make test_parse pass.", True,
                     Blocked("I was unable to make test_parse pass."),
                     id="inability-in-the-last-sentence"),
        pytest.param("My apologies — the data file is missing, so nothing was plotted.", False,
                     Blocked("My apologies — the data file is missing, so nothing was plotted."),
                     id="apologies"),
        pytest.param("I am not able to access the internet to download the dataset.", False,
                     Blocked("I am not able to access the internet to download the dataset."),
                     id="not-able"),
        pytest.param("I don't have permission to write to /etc/hosts.", False,
                     Blocked("I don't have permission to write to /etc/hosts."),
                     id="no-permission"),
        # an inability in the middle of a report is a detail, not the blocker
        pytest.param("Fixed parse(). Since I can't reach PyPI, I used the vendored copy. "
                     "The tests pass.", True, Done(), id="inability-mid-report"),
        pytest.param("Sorryyy", False, Done(), id="sorry-as-part-of-a-word"),
        pytest.param("I’m sorry, I can’t open that file.", False,
                     Blocked("I'm sorry, I can't open that file."), id="curly-apostrophes"),
        pytest.param("I'm sorry.", False, Blocked("I'm sorry."), id="only-an-apology"),
        pytest.param("Sorry for the confusion!", False, Blocked("Sorry for the confusion!"),
                     id="only-an-apology-for-something"),
        # an apology that goes on to report is no blocker (a capable model after the
        # verification round often opens so)
        pytest.param("Apologies for the oversight — I ran the tests and all 5 pass.", True,
                     Done(), id="apology-then-report"),
        pytest.param("Sorry for the delay! Created hello.py and ran it: it prints hello world.",
                     True, Done(), id="sorry-for-the-delay"),
        # --- questions -----------------------------------------------------------------------
        pytest.param("Should todos live in JSON or SQLite?", False,
                     Question("Should todos live in JSON or SQLite?"), id="design-question"),
        pytest.param("I found two parse() functions. Which one should I change? **", False,
                     Question("Which one should I change?"), id="question-then-decoration"),
        pytest.param("Would you like me to create hello.py?", False,
                     Question("Would you like me to create hello.py?"),
                     id="permission-before-any-work-is-a-question"),
        pytest.param("I'm sorry, I can't find data.csv. Where is it?", False,
                     Question("Where is it?"), id="blocked-then-asks-is-a-question"),
        # an offer of more, once the task changed something, closes a report
        pytest.param("Created hello.py and ran it: it prints hello world. Would you like me to "
                     "add a test too?", True, Done(), id="offer-of-more-after-work"),
        pytest.param("All tests pass. Anything else?", True, Done(), id="anything-else"),
        pytest.param("Done. Shall I also update the README?", True, Done(), id="shall-i"),
        pytest.param("Which Python version do you use?", True,
                     Question("Which Python version do you use?"),
                     id="real-question-after-work"),
        pytest.param("Is this what you wanted?\n```\nprint(1)\n```", False, Done(),
                     id="ends-in-code"),
        pytest.param("", False, Done(), id="empty"),
    ],
)
def test_prose_fallback(text: str, work_done: bool, expected: FinalReply) -> None:
    assert classify_final_reply(None, text, work_done=work_done) == expected


@pytest.mark.parametrize(
    ("finish", "text", "expected"),
    [
        pytest.param(FinishCall("done", "Added add() and a passing test."), "", Done("finish"),
                     id="done"),
        # the typed call wins over the prose, both ways
        pytest.param(FinishCall("done", "All set."), "I'm sorry, I can't do that.",
                     Done("finish"), id="typed-done-beats-an-apology"),
        pytest.param(FinishCall("blocked", "Nothing changed.", "pip cannot reach PyPI"),
                     "Done!", Blocked("pip cannot reach PyPI", "finish"),
                     id="typed-blocked-beats-done-prose"),
        pytest.param(FinishCall("blocked", "The port stays busy."), "",
                     Blocked("The port stays busy.", "finish"), id="blocked-reason-in-summary"),
        pytest.param(FinishCall("blocked"), "", Blocked(NO_REASON, "finish"),
                     id="blocked-without-reason"),
        pytest.param(FinishCall("question", "", "JSON or SQLite?"), "",
                     Question("JSON or SQLite?", "finish"), id="question"),
        pytest.param(FinishCall("question", "Which file do you mean?"), "",
                     Question("Which file do you mean?", "finish"), id="question-in-summary"),
        pytest.param(FinishCall("question"), "", Question(NO_QUESTION, "finish"),
                     id="question-without-text"),
    ],
)
def test_the_finish_call_wins(finish: FinishCall, text: str, expected: FinalReply) -> None:
    assert classify_final_reply(finish, text, work_done=True) == expected


@pytest.mark.parametrize(
    ("finish", "answer"),
    [
        pytest.param(FinishCall("done", " Added add(). "), "Added add().", id="summary"),
        pytest.param(FinishCall("blocked", "Nothing changed.", "PyPI is unreachable"),
                     "Nothing changed.\n\nPyPI is unreachable", id="summary-and-blocker"),
        pytest.param(FinishCall("question", "", "JSON or SQLite?"), "JSON or SQLite?",
                     id="question-only"),
        pytest.param(FinishCall("question", "Use JSON or SQLite?", "JSON or SQLite?"),
                     "Use JSON or SQLite?", id="detail-already-in-summary"),
    ],
)
def test_answer_of(finish: FinishCall, answer: str) -> None:
    assert answer_of(finish) == answer
