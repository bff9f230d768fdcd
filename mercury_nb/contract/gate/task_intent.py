"""Whether a task asks a question (an answer, no changes expected) or asks for work.

Explicit mode wins: ``chat`` is always a question. In ``execute`` mode the reading is
anchored and works on whole words, never substrings ("latest" is not "test",
"address" is not "add"). It goes sentence by sentence, and clause by clause (commas,
colons, "and", "then", "but", "or"):

1. an instruction is work — a sentence that opens (after "please", "now", "go ahead
   and", "can you", "I need you to", ...) with a verb that acts on the machine: one that
   only ever does ("run", "execute", "kill", "download", "unzip", "install", ...), or one
   that does when its object is a machine's ("start", "stop", "launch", "open", ... the
   server, the kernel, a container), or with a shell command ("sleep 300", "ls -la"). Such
   a verb names the work itself, so no "work word" is needed: "Run the shell command:
   sleep 300" runs it. A dative keeps it chat ("run me through the scheduler"). After the
   first clause, an imperative coding clause counts too ("Explain the bug in parse.py and
   fix it", "... Then refactor it.", "Is port 8000 free? If not, kill whatever holds it.").
   A sentence ending in "?" is an instruction only as a polite request ("Can you run the
   tests?"): "Download speeds are slow, why?" asks;
   then a file the task asks to create, write or edit is work (``read_task(...).must_exist``,
   the gate's one file-name reader: "Write notes.rst", "Summarize README.md into
   SUMMARY.md", "Save the table as results.xlsx");
2. a question — the text opens with an interrogative or auxiliary ("what", "how",
   "is", "can", ..., "explain", "tell me", "describe"), or ends with "?" without
   opening with an imperative verb; a polite request ("can you add ...") is not one;
3. work — otherwise, when a word names software work: a coding verb ("implement",
   "refactor", "fix", ...), a software artifact ("test", "function", "notebook",
   "app", ...), a language or tool, a file path, ``code`` or a ``call()``;
4. otherwise a chat-like request ("make me a workout plan based on the latest
   research", "write me a haiku"): treated as a question. Its verb makes text for the
   reader ("write", "make", "build", "draft"), not a change to the machine, so it is not
   an instruction in the sense of rule 1, and reading it as work would force tool rounds
   on a request that only wants words. Wrongly reading work as chat costs an honest
   "no file changes" banner; wrongly reading chat as work costs forced rounds.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

from mercury_nb.contract.gate.file_names import FILE_NAME_PATTERN, NOT_INSIDE_A_NAME
from mercury_nb.contract.gate.question_reading import (
    IMPERATIVE_VERBS,
    POLITE_PREFIXES,
    TRAILING_CLOSERS,
    looks_like_question,
    strip_please,
    words_of,
)
from mercury_nb.contract.gate.shell_commands import opens_with_shell_command
from mercury_nb.contract.gate.task_reading import read_task
from mercury_nb.contract.gate.task_requirements import TaskRequirements
from mercury_nb.contract.word_sets import word_set

__all__ = ["CODING_VERBS", "TaskIntent", "classify_intent", "clauses", "is_instruction",
           "lead_stripped", "looks_like_question", "sentence_asks", "sentences", "work_signals"]


class TaskIntent(StrEnum):
    """What the user expects back."""

    QUESTION = "question"
    WORK = "work"


CODING_VERBS = word_set(
    "implement implementing refactor refactoring debug debugging fix compile deploy install"
    " lint typecheck scaffold vectorize unittest"
)
_ARTIFACTS = word_set(
    "code codebase file files folder directory function functions method methods class"
    " classes module modules package library script scripts test tests testcase bug bugs error"
    " errors exception traceback repo repository project app application api cli endpoint"
    " endpoints server website webpage frontend backend database schema notebook notebooks"
    " cell cells dataframe dataset readme changelog dockerfile makefile config configuration"
    " component widget parser variable variables parameter parameters argument arguments docstring"
    " docstrings dependency dependencies import imports plot chart regex commit decorator"
    " struct enum interface lambda recursion algorithm csv json yaml toml html css"
)
_TECHNOLOGIES = word_set(
    "python javascript typescript js ts rust golang java kotlin cpp sql react vue svelte"
    " flask django fastapi pandas numpy matplotlib seaborn plotly pytorch torch tensorflow"
    " sklearn scikit node nodejs npm pip jupyter ipython pytest mypy ruff git docker litellm"
    " pydantic"
)
_CALL_OR_CODE = re.compile(
    r"`[^`]+`"  # inline code
    r"|\b[\w-]+\(\)"  # a call: parse()
    r"|(?<![\w/])(?:\.{1,2}|~)?/[\w.-]+(?:/[\w.-]+)*"  # a path: ./src, /tmp/x, ~/data
    rf"|{NOT_INSIDE_A_NAME}{FILE_NAME_PATTERN}",  # a file name: the gate's one reader
    re.IGNORECASE,
)


def work_signals(text: str) -> tuple[str, ...]:
    """The words that name software work, then the code-like spans (files, paths,
    calls, inline code); words inside a span (the "app" of "app.py") are not counted."""
    spans = tuple(match.group(0) for match in _CALL_OR_CODE.finditer(text))
    words = words_of(_CALL_OR_CODE.sub(" ", text))
    named = tuple(w for w in words if w in CODING_VERBS or w in _ARTIFACTS or w in _TECHNOLOGIES)
    return named + spans


_RUN_VERBS = word_set(
    "run rerun execute exec kill restart relaunch download redownload upload unzip untar"
    " unpack decompress install uninstall reinstall upgrade downgrade mount unmount ping curl"
    " wget clone deploy redeploy rebuild terminate reboot benchmark"
)
"""Verbs that only ever act on the machine: an instruction whatever their object."""
_SWITCH_VERBS = word_set(
    "start stop launch open serve spin boot shut pull push fetch check retry"
)
"""Verbs that act on the machine when their object is a machine's (within four words)."""
_MACHINE_OBJECTS = word_set(
    "server servers process processes kernel worker workers container containers service"
    " services daemon job jobs app application script scripts tests test suite build pipeline"
    " port ports command commands shell terminal database db vm cluster instance tunnel"
    " notebook jupyter lab docker backend frontend api watcher queue scheduler branch repo"
    " changes commits origin upstream download downloads upload"
)
_DATIVES = frozenset({"me", "us"})
_LEAD_INS = (
    ("please",), ("kindly",), ("now",), ("then",), ("next",), ("also",), ("and",), ("first",),
    ("finally",), ("ok",), ("okay",), ("so",), ("just",), ("hey",), ("hi",), ("let's",),
    ("go", "ahead", "and"), ("i", "need", "you", "to"), ("i", "want", "you", "to"),
    ("i'd", "like", "you", "to"), ("i", "would", "like", "you", "to"), ("you", "should"),
    ("if", "not"), ("if", "so"), ("otherwise",),
    *POLITE_PREFIXES,
)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|\n+")


def lead_stripped(words: list[str]) -> list[str]:
    """The words after any lead-in ("please", "go ahead and", "can you", ...)."""
    stripped = True
    while stripped and words:
        stripped = False
        for lead in _LEAD_INS:
            if tuple(words[: len(lead)]) == lead and len(words) > len(lead):
                words, stripped = words[len(lead):], True
                break
    return words


def is_instruction(sentence: str) -> bool:
    """Whether ``sentence`` tells the agent to act on the machine (rule 1 of the module)."""
    words = lead_stripped(words_of(sentence))
    if not words:
        return False
    verb, rest = words[0], words[1:]
    if verb in _RUN_VERBS and not (rest and rest[0] in _DATIVES):
        return True
    if verb in _SWITCH_VERBS and any(word in _MACHINE_OBJECTS for word in rest[:4]):
        return True
    return opens_with_shell_command(sentence)


def sentence_asks(sentence: str) -> bool:
    """It ends in "?" and is no polite request ("Can you run the tests?" asks for work;
    "Download speeds are slow, why?" asks, its verb being a noun)."""
    if not sentence.rstrip(TRAILING_CLOSERS).endswith("?"):
        return False
    words = strip_please(words_of(sentence))
    return not any(tuple(words[: len(prefix)]) == prefix for prefix in POLITE_PREFIXES)


def _later_instruction(clause: str) -> bool:
    """A clause after the first that tells the agent to act: an instruction, or an
    imperative coding verb ("... and fix it", "Then refactor it.")."""
    if is_instruction(clause):
        return True
    words = lead_stripped(words_of(clause))
    if not words or words[0] not in IMPERATIVE_VERBS | CODING_VERBS:
        return False
    return words[0] in CODING_VERBS or bool(work_signals(clause))


def _instructs(task: str) -> bool:
    """Whether a clause of a sentence that does not ask tells the agent to act: the text's
    first clause as an instruction (rule 1), any later one as an instruction or an imperative
    coding clause ("Explain the bug in parse.py and fix it", "Is port 8000 free? If not, kill
    whatever holds it.")."""
    for i, sentence in enumerate(sentences(task)):
        if sentence_asks(sentence):
            continue
        for j, clause in enumerate(clauses(sentence)):
            if is_instruction(clause) if i == j == 0 else _later_instruction(clause):
                return True
    return False


_CLAUSE_BREAK = re.compile(r"\s*[,:]\s+|\s+(?:and|then|but|or)\s+", re.IGNORECASE)


def clauses(sentence: str) -> list[str]:
    """The clauses of a sentence: split at commas, colons and "and", "then", "but", "or"."""
    return [part for part in _CLAUSE_BREAK.split(sentence) if part.strip()]


def sentences(text: str) -> list[str]:
    """The text's sentences and lines, blank ones left out."""
    return [part for part in _SENTENCE_BREAK.split(text.strip()) if part.strip()]


def _is_bare_resume(text: str) -> bool:
    return " ".join(words_of(text)) in {"continue", "resume", "proceed", "go on", "keep going"}


def classify_intent(task: str, mode: Literal["execute", "chat"],
                    requirements: TaskRequirements | None = None) -> TaskIntent:
    """Explicit mode wins; then instructions in any clause; then files the task asks to
    create, write or edit (``read_task(...).must_exist``: "Write notes.rst", "Summarize
    README.md into SUMMARY.md"); then the anchored question reading; then work signals
    (see the module's rules). ``requirements``: the task's ``read_task``, when read already."""
    if mode == "chat":
        return TaskIntent.QUESTION
    if requirements is None:
        requirements = read_task(task, mode)
    if _instructs(task) or requirements.must_exist:
        return TaskIntent.WORK
    if looks_like_question(task):
        return TaskIntent.QUESTION
    if work_signals(task) or _is_bare_resume(task):
        return TaskIntent.WORK
    return TaskIntent.QUESTION
