"""Whether a work task unambiguously demands a change, or may end as an answer.

``classify_intent`` reads "Look through the notes folder and tell me which file mentions the
budget" as work: its words name a folder and a file. It is a question phrased as an
instruction, and forcing a change on it produces junk writes. This reading tells the two
apart for the narration guard (:mod:`mercury_nb.contract.turns.guard_trigger`). In execute
mode a task **demands** a change when:

1. it names a file to create, write or edit, or asks to run something
   (``read_task(...).must_exist``, ``.runs``, the ``run`` kind): "Write notes.rst",
   "Summarize README.md into SUMMARY.md", "Run the tests and tell me which fail", "ls -la";
2. or a clause of a sentence that does not ask back opens (after "please", "can you", "then",
   ...) with a verb that changes something: a writing, editing, moving or removing verb of
   ``task_words`` ("create", "add", "fix", "update", "rename", "delete"), a transforming one
   that makes a new thing ("convert", "copy", "merge", "export"), a coding verb ("implement",
   "refactor", "debug", "install"), one that needs a program run ("plot", "train", "test",
   "deploy"), a resume word ("continue"), or an instruction to act on the machine
   (``is_instruction``: "kill", "start the server", a shell command). A dative keeps a writing
   verb a request for words ("write me a summary of notes/"), and a few pairs only look
   ("add up", "make sure", "comment on"); so do the reading verbs that ``is_instruction``
   takes for actions on a machine's object ("open the notebook", "check the port").

Otherwise the demand is **unclear**: its verbs look, read, find, list, check, tell or show
("Find where the timeout is set", "Check the logs folder for errors and tell me what went
wrong"), or it has none ("README.md typo on line 3"). Such a task ends as an answer when the
model investigated and answered, and the guard's first round offers the model a typed "no
change needed" choice instead of forcing a change. Reading a demand as unclear costs at most
an honest "no file changes" answer; reading an unclear task as a demand costs forced rounds.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from mercury_nb.contract.gate.question_reading import words_of
from mercury_nb.contract.gate.task_intent import (
    CODING_VERBS,
    clauses,
    is_instruction,
    lead_stripped,
    sentence_asks,
    sentences,
)
from mercury_nb.contract.gate.task_reading import read_task
from mercury_nb.contract.gate.task_requirements import TaskRequirements
from mercury_nb.contract.gate.task_words import VERBS, VerbClass
from mercury_nb.contract.word_sets import word_set

__all__ = ["ChangeDemand", "change_demand", "demanding_clause"]


class ChangeDemand(StrEnum):
    """How plainly a task asks for a change (see the module)."""

    DEMANDED = "demanded"
    UNCLEAR = "unclear"


_WORDS_FOR_THE_READER = word_set("summarise summarize translate transcribe extract")
"""Transforming verbs whose result may be words in the reply ("translate the README")."""
_CHANGE_VERBS = (
    VERBS[VerbClass.WRITE] | VERBS[VerbClass.EDIT] | VERBS[VerbClass.MOVE]
    | VERBS[VerbClass.REMOVE] | (VERBS[VerbClass.TRANSFORM] - _WORDS_FOR_THE_READER)
    | CODING_VERBS
    | word_set("plot visualise visualize train test retrain deploy migrate benchmark try"
             " continue resume proceed")
)
"""Verbs that open a clause demanding a change (or a run the gate will ask to see)."""
_READING_ACTIONS = VERBS[VerbClass.READ]
"""Verbs ``is_instruction`` may take for actions ("open the notebook", "check the port")
that only look."""
_ONLY_LOOKING = frozenset({("add", "up"), ("make", "sure"), ("make", "certain"),
                           ("comment", "on"), ("set", "aside")})
_DATIVES = frozenset({"me", "us"})


def demanding_clause(clause: str) -> bool:
    """Whether one clause opens with a verb that demands a change (rule 2 of the module)."""
    words = lead_stripped(words_of(clause))
    if not words:
        return False
    verb, rest = words[0], words[1:]
    if verb in _CHANGE_VERBS:
        if (verb, rest[0] if rest else "") in _ONLY_LOOKING:
            return False
        return not (rest and rest[0] in _DATIVES and verb in VERBS[VerbClass.WRITE])
    return verb not in _READING_ACTIONS and is_instruction(clause)


def change_demand(task: str, mode: Literal["execute", "chat"],
                  requirements: TaskRequirements | None = None) -> ChangeDemand:
    """``DEMANDED`` when the task names a file to make or a run, or a clause of a sentence
    that does not ask back opens with a changing verb; else ``UNCLEAR`` (chat mode always).
    ``requirements``: the task's ``read_task``, when read already."""
    if mode == "chat":
        return ChangeDemand.UNCLEAR
    if requirements is None:
        requirements = read_task(task, mode)
    if requirements.must_exist or requirements.runs or "run" in requirements.kinds:
        return ChangeDemand.DEMANDED
    for sentence in sentences(task):
        if sentence_asks(sentence):
            continue
        if any(demanding_clause(clause) for clause in clauses(sentence)):
            return ChangeDemand.DEMANDED
    return ChangeDemand.UNCLEAR
