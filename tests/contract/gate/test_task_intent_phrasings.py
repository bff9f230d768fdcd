"""One table of real-looking phrasings, read both ways: every instruction is work, every
question (and every chat-like request) is a question. Instructions need no "work word"."""

from __future__ import annotations

import pytest

from mercury_nb.contract.gate.task_intent import TaskIntent, classify_intent

W = TaskIntent.WORK
Q = TaskIntent.QUESTION

INSTRUCTIONS: tuple[str, ...] = (
    # commands to run, no work word at all
    "Run the shell command: sleep 300",
    "Start the server and check the port",
    "Download the data and unzip it",
    "Kill the process on port 8000",
    "Kill pid 4242",
    "Run it again",
    "Retry the download",
    "Upload the results to the bucket",
    "Ping the staging host",
    "Check whether port 8080 is free",
    "Spin up a postgres container for the tests",
    "Fetch the latest changes from origin",
    "Restart the app and tail the logs",
    "Start a local HTTP server serving this folder",
    "Stop the dev server.",
    "Launch jupyter lab on port 8890",
    # shell commands typed as the task
    "sleep 300",
    "ls -la",
    "$ du -sh ./data",
    "pip install -r requirements.txt",
    "wget the dataset from the link in the notes",
    "tail -n 50 server.log",
    # polite forms, "please", lead-ins, lowercase, trailing punctuation
    "Please run the benchmarks.",
    "please restart the kernel",
    "Can you run the tests?",
    "Could you restart the database container?",
    "Would you please download the latest release and extract it into vendor/",
    "Go ahead and start the worker",
    "I need you to kill whatever is listening on 5432",
    "Now run the migrations",
    "Let's run the linter and fix what it finds",
    "ok, reinstall numpy",
    "Update the dependencies and rerun the test suite!!",
    "run `sleep 300`",
    "execute the notebook top to bottom",
    # coding and notebook work, as before
    "Execute train.py with 3 epochs",
    "Clone the repo and build it",
    "Fix the failing test in tests/test_parse.py",
    "Add type hints to utils.py",
    "Create hello.py that prints hello world, and run it.",
    "Write a function that reverses a string",
    "Refactor the loop in main() into a helper",
    "Plot the loss curve from history.csv",
    "Make the tests pass",
    "Rename the column `amt` to `amount` in the dataframe",
    "Add a cell to the notebook that loads the CSV",
    "Bump the version to 1.2.0 in pyproject.toml",
    "Delete the build directory",
    # several sentences: an instruction after a statement or a question
    "The tests fail on CI. Please fix them.",
    "The server is down. Restart it.",
    "What is on port 8000? Kill it.",
    "Can you explain the loop? Then refactor it.",
    "What's wrong with parse()? Can you fix it?",
    # a file the task asks for, whatever its suffix (the gate's one file-name reader)
    "Write notes.rst with three ideas",
    "Create main.zig that prints hi",
    "Save the table as results.xlsx",
    "Write a poem to poem.org",
    "Write ideas.adoc listing three ideas",
    "Create index.mdx",
    "Write meeting minutes to minutes.tex",
    "Summarize README.md into SUMMARY.md",
    "Write release notes in CHANGELOG",
    # an instruction in a later clause of a question
    "Explain the bug in parse.py and fix it",
    "Tell me what is wrong with utils.py and fix it",
    "Is port 8000 free? If not, kill whatever holds it.",
    "Describe the API, then write it up in docs/api.md",
)

QUESTIONS: tuple[str, ...] = (
    # questions about the workspace
    "What does this repo do?",
    "Can you explain the loop?",
    "how do I run the tests?",
    "Is there a bug in parse()?",
    "Tell me about the config",
    "Why is test_parse failing",
    "How do I start the server?",
    "What happens if I run `rm -rf build`?",
    "Which port does the server listen on?",
    "Explain what sleep 300 does",
    "Should I kill the process or restart it?",
    "Do you know how to download a file with curl?",
    "can you tell me what the start script does",
    "Describe how the download step works",
    "Summarise README.md",
    "What does `kill -9` mean?",
    "Who wrote this module?",
    "When was this function last changed?",
    "Where are the logs written?",
    "is it safe to run the migrations twice?",
    "Are the tests slow?",
    "Could you explain why the server won't start?",
    "Would it be faster to use numpy here?",
    "Please tell me what the deploy script does",
    "Do you think I should restart the server?",
    "Is it ok to restart the kernel now?",
    "Why does the server stop after a minute?",
    "The download keeps failing, any idea why?",
    "Download speeds are slow here, why?",
    "Retry your last answer in simpler words",
    "Compare Python and Rust for a CLI tool?",
    "How does the cache work? Can you explain it simply?",
    "What changed in utils.py? Use plain words.",
    # a dative or a question after the verb keeps these chat
    "Run me through how the scheduler works",
    "Stop apologizing and just tell me: is the cache thread-safe?",
    # chat-like requests: their verb makes words for the reader, not a change
    "make me a workout plan based on the latest research",
    "Write me a haiku about autumn",
    "Build me a training program to build muscle",
    "What is the address of the Eiffel Tower",
    "What's the difference between a process and a thread?",
    "Give me three ideas for a birthday party",
    "Suggest a name for my cat",
    "Show me how generators work",
    "Tell me a joke",
    "Translate 'good morning' into French",
    "Help me plan a trip to Rome",
    "Recommend a good book on statistics",
    "Draft an email to my landlord about the heating",
    "Check my essay for typos",
    "Start a story about a dragon who is afraid of heights",
    "Open a discussion about remote work",
    "Echo my thoughts back to me",
    # files named only to be read or asked about
    "What does parse.py do?",
    "Can you explain utils.py?",
    "Tell me how to add a function to calc.py",
    "Explain how to create hello.py",
    "How do I write tests in test_x.py?",
    "What is the difference between version 1.2 and 1.3?",
    "Is example.com down? Why?",
    # small talk
    "hey, how's it going?",
    "Thanks!",
    "what time is it in Tokyo",
)

TABLE = [pytest.param(text, W, id=f"work: {text}") for text in INSTRUCTIONS] + [
    pytest.param(text, Q, id=f"question: {text}") for text in QUESTIONS
]


def test_the_table_is_big_and_balanced() -> None:
    assert len(INSTRUCTIONS) >= 45 and len(QUESTIONS) >= 40
    assert len(set(INSTRUCTIONS) | set(QUESTIONS)) == len(INSTRUCTIONS) + len(QUESTIONS)


@pytest.mark.parametrize(("text", "expected"), TABLE)
def test_execute_mode_reads_each_phrasing(text: str, expected: TaskIntent) -> None:
    assert classify_intent(text, "execute") is expected


@pytest.mark.parametrize(("text", "expected"), TABLE)
def test_chat_mode_reads_every_phrasing_as_a_question(text: str, expected: TaskIntent) -> None:
    assert classify_intent(text, "chat") is Q
