"""Reads what a task asks for from its words (``read_task``), as ``TaskRequirements``.

The files it names (and which must exist at the end), what it asks to run, and the kind of
work: code, tests, a run, or content.

The reading works on whole words and file names, left to right, one instruction at a time:

* a verb at the start of an instruction ("create", "run", "delete", ...; see
  ``task_words``) governs the files after it, until the next verb or the end of a sentence;
* a preposition says where a file stands: "add a function *to* calc.py" names a target,
  "tests *for* calc.py" or "a summary *of* README.md" a reference that is only read;
* a relative clause ("hello.py *that prints* hello world") describes the program, not
  the agent: files in it are mentioned, not written by the agent;
* "how" (or "why", "whether", "what"), not first, after no verb or a reading one, opens a
  described clause too: "Tell me how to add a function to calc.py" asks about the work;
* "run it" (or "run the script") means the runnable file the task names.

Only files the task asks to create, write or edit must exist at the end: "delete old.py"
and the old name of "rename a.py to b.py" must not, and a question names files it only
reads.
"""

from __future__ import annotations

import posixpath
import re
from typing import Literal

from mercury_nb.contract.gate import task_words as tw
from mercury_nb.contract.gate.file_kinds import is_non_code_path, normalize_path
from mercury_nb.contract.gate.file_names import (
    FILE_NAME,
    FILE_NAME_PATTERN,
    NOT_INSIDE_A_NAME,
    is_file_name,
)
from mercury_nb.contract.gate.question_reading import asks_outright
from mercury_nb.contract.gate.requested_runs import RequestedRuns
from mercury_nb.contract.gate.shell_commands import bare_command
from mercury_nb.contract.gate.task_requirements import (
    EXISTING_ROLES,
    PLACE_ROLES,
    FileRole,
    NamedFile,
    TaskRequirements,
    WorkKind,
    is_test_path,
    unique_paths,
)
from mercury_nb.contract.gate.task_words import VerbClass

_TOKEN = re.compile(
    r"(?P<url>\b[a-z][a-z0-9+.-]*://\S+)"
    r"|`(?P<code>[^`\n]+)`"
    rf"|(?P<file>{NOT_INSIDE_A_NAME}{FILE_NAME_PATTERN})"
    r"|(?P<word>[a-z][a-z0-9]*(?:[-'’][a-z0-9]+)*)"
    r"|(?P<stop>[.!?](?=\s|$)|[;\n])"
    r"|(?P<comma>,)"
    r"|(?P<colon>:)",
    re.IGNORECASE,
)
_TASK_WORD = re.compile(r"[A-Za-z]{3,}")
_COMMAND_END = re.compile(r"\.(?:\s|$)|\n|$")

class _Reader:
    """One left-to-right pass over a task's tokens (see the module docstring)."""

    def __init__(self, task: str) -> None:
        self.task = task
        self.verb: VerbClass | None = None
        self.verb_word = ""
        self.prep: Literal["target", "reference"] | None = None
        self.described = False
        self.described_verb: VerbClass | None = None
        self.expect_verb = True
        self.after_and = False
        self.object_open = False
        self.run_object = False
        self.run_refs = False
        self.saw_tests = False
        self.words_seen = 0
        self.artifacts: list[str] = []
        self.files: list[NamedFile] = []
        self.kinds: set[WorkKind] = set()
        self.commands: list[str] = []

    def read(self) -> None:
        command = bare_command(self.task)
        if command is not None:  # the task is a command line: running it is the task, and
            self.commands.append(command)  # the files on it are its arguments, no programs
            self.run_object = True
            return
        position = 0
        while True:
            match = _TOKEN.search(self.task, position)
            if match is None:
                return
            position = match.end()
            kind, value = match.lastgroup, match.group(match.lastgroup or 0)
            if kind == "stop":
                self._end_sentence()
            elif kind == "comma":
                self.described, self.expect_verb, self.after_and = False, True, False
            elif kind == "colon":
                position = self._colon(position)
            elif kind == "file":
                self._file(value)
            elif kind == "code":
                self._code(value)
            elif kind == "word":
                self._word(value.lower().replace("’", "'"))

    def _end_sentence(self) -> None:
        self.verb, self.prep, self.described = None, None, False
        self.expect_verb, self.after_and, self.object_open = True, False, False

    def _colon(self, position: int) -> int:
        """``run the command: sleep 300`` names a command; any other colon opens a clause."""
        if self.verb is VerbClass.RUN and not self.described and not self.run_object:
            end = _COMMAND_END.search(self.task, position)
            stop = end.start() if end is not None else len(self.task)
            command = self.task[position:stop].strip().strip("`'\"").strip()
            if command:
                self._command(command)
            return stop
        self.expect_verb = True
        return position

    def _word(self, word: str) -> None:
        if word == "please":
            return
        if word in tw.RELATIVE_PRONOUNS:
            self.described, self.described_verb, self.expect_verb = True, None, True
            self.object_open = False
            return
        self.words_seen += 1
        if (word in tw.HOW_WORDS and self.words_seen > 1 and not self.described
                and self.verb in (None, VerbClass.READ)):
            self.described, self.described_verb, self.expect_verb = True, None, True
            return  # "Explain how to create hello.py": the how, not an order to create it
        if word in tw.CLAUSE_RESET_WORDS:
            self.described, self.expect_verb = False, True
            return
        if self.expect_verb and self._verb(word):
            return
        after_and = word in {"and", "or"}
        self.expect_verb = word in tw.VERB_OPENERS
        if word in tw.TARGET_PREPOSITIONS:
            self.prep, self.object_open = "target", False
        elif word in tw.REFERENCE_PREPOSITIONS:
            self.prep, self.object_open = "reference", False
        elif after_and:
            self.object_open = self.verb is not None
        else:
            self._noun(word)
        self.after_and = after_and

    def _verb(self, word: str) -> bool:
        """Read ``word`` as the verb of a new instruction (or of the relative clause)."""
        if self.described and self.after_and and tw.verb_class(word) is not None:
            self.described = False  # "..., a script that reads x and run it": a new order
        cls = tw.verb_class(word, described=self.described)
        if cls is None:
            return False
        if self.described:
            self.described_verb = cls
        else:
            self.verb, self.verb_word, self.prep = cls, word, None
            self.object_open, self.run_object = True, False
            if cls is VerbClass.RUN:
                self.kinds.add("run")
        self.expect_verb = self.after_and = False
        return True

    def _noun(self, word: str) -> None:
        if word in tw.ARTIFACT_PLACES and self.verb is not None and self._role() in EXISTING_ROLES:
            self.artifacts.append(word)  # "Write a README", "Update the docs": a loose place
        if word in tw.PASS_WORDS and self.saw_tests:
            self.kinds.update(("tests", "run"))
        if self.described or self.verb is None or not self.object_open:
            return
        writing = self.verb in (VerbClass.WRITE, VerbClass.EDIT, VerbClass.TRANSFORM)
        if word in tw.TEST_NOUNS and (writing or self.verb is VerbClass.RUN):
            self.kinds.add("tests")
            self.saw_tests = True
        elif writing and self.verb_word in tw.CONTENT_VERBS:
            self.kinds.add("content")
        elif writing and (word in tw.CODE_NOUNS or word in tw.CODE_LANGUAGES):
            self.kinds.add("code")
        elif writing and (word in tw.CONTENT_NOUNS
                          or (word in tw.FILE_NOUNS and "code" not in self.kinds)):
            self.kinds.add("content")
        elif self.verb is VerbClass.RUN and word in tw.RUN_REFERENCES:
            self.run_refs = True

    def _role(self) -> FileRole:
        if self.described:
            return FileRole.READ if self.described_verb is VerbClass.READ else FileRole.DESCRIBED
        match self.verb:
            case None:
                return FileRole.MENTION
            case VerbClass.WRITE | VerbClass.EDIT:
                if self.prep == "reference":
                    return FileRole.READ
                return FileRole.WRITE if self.verb is VerbClass.WRITE else FileRole.EDIT
            case VerbClass.TRANSFORM:
                return FileRole.WRITE if self.prep == "target" else FileRole.READ
            case VerbClass.MOVE:
                return FileRole.WRITE if self.prep == "target" else FileRole.REMOVE
            case VerbClass.READ:
                return FileRole.READ
            case VerbClass.RUN:
                return FileRole.RUN
            case VerbClass.REMOVE:
                return FileRole.REMOVE if self.prep is None else FileRole.EDIT

    def _file(self, text: str) -> None:
        path = normalize_path(text)
        if path.lower() in tw.SKIPPED_FILE_NAMES:
            return
        role = self._role()
        if role is FileRole.RUN:
            self.run_object = True
        self.files.append(NamedFile(path, role))
        self.expect_verb = self.after_and = False

    def _code(self, text: str) -> None:
        if is_file_name(text):
            self._file(text)
        elif self.verb is VerbClass.RUN and not self.described:
            self._command(text.strip())

    def _command(self, command: str) -> None:
        self.commands.append(command)
        self.run_object = True
        for match in FILE_NAME.finditer(command):
            self.files.append(NamedFile(normalize_path(match.group(0)), FileRole.RUN))

    def requirements(self, binding: bool) -> TaskRequirements:
        kinds = set(self.kinds)
        for named in self.files:
            if named.role in (FileRole.READ, FileRole.DESCRIBED):
                continue
            if named.role is FileRole.RUN:
                kinds.update(("run", "code"))
            elif is_test_path(named.path):
                kinds.update(("tests", "code"))
            elif is_non_code_path(named.path):
                kinds.add("content")
            else:
                kinds.add("code")
        removed = {f.path for f in self.files if f.role is FileRole.REMOVE}
        must_exist = unique_paths(
            f.path for f in self.files if f.role in EXISTING_ROLES and f.path not in removed
        ) if binding else ()
        return TaskRequirements(
            files=tuple(self.files), kinds=frozenset(kinds),
            runs=RequestedRuns(self._programs(), tuple(self.commands)), must_exist=must_exist,
            artifacts=unique_paths(self.artifacts),
            words=frozenset(w.lower() for w in _TASK_WORD.findall(self.task)),
        )

    def _programs(self) -> tuple[str, ...]:
        runnable = [f for f in self.files if _runnable(f.path)]
        named = [f.path for f in runnable if f.role is FileRole.RUN]
        if self.run_refs:
            named += [f.path for f in runnable if f.role in PLACE_ROLES - {FileRole.REMOVE}]
        return unique_paths(named)


def _runnable(path: str) -> bool:
    return posixpath.splitext(path)[1].lower() in tw.RUNNABLE_SUFFIXES


def read_task(task: str, mode: Literal["execute", "chat"] = "execute") -> TaskRequirements:
    """The requirements of ``task``. In chat mode, and for a question, no file must exist:
    a question names files it only reads."""
    reader = _Reader(task)
    reader.read()
    return reader.requirements(binding=mode == "execute" and not asks_outright(task))
