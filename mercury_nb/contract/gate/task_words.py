"""The word tables the task-requirements reading uses: verbs by what they do to a file, nouns
by the kind of work they name, and the prepositions that say where a file stands."""

from __future__ import annotations

from enum import Enum

from mercury_nb.contract.word_sets import word_set


class VerbClass(Enum):
    """What an imperative verb does to the files it governs."""

    WRITE = "write"  # create, write, add...: the file is a target and must exist at the end
    EDIT = "edit"  # update, fix, refactor...: the file is a target and must still exist
    TRANSFORM = "transform"  # convert X to Y, summarise X in Y: X is read, Y is written
    MOVE = "move"  # rename X to Y, move X into Y: X goes away, Y must exist
    READ = "read"  # read, load, explain...: the file is only read
    RUN = "run"  # run, execute...: the file is a program to run
    REMOVE = "remove"  # delete, remove...: the file must NOT exist at the end


VERBS: dict[VerbClass, frozenset[str]] = {
    VerbClass.WRITE: word_set(
        "create write add make generate build implement produce save put store output dump"
        " draft scaffold init initialise initialize touch append insert record log jot"
        " document define declare prepare compose set delegate"
    ),
    VerbClass.EDIT: word_set(
        "update edit modify change fix refactor rewrite extend improve clean correct format"
        " reformat sort replace patch tweak optimize optimise adjust complete finish fill"
        " expand shorten reword proofread annotate comment uncomment bump revise polish"
    ),
    VerbClass.TRANSFORM: word_set(
        "convert translate summarise summarize copy cp export extract port transform"
        " transcribe split merge combine"
    ),
    VerbClass.MOVE: word_set("rename move mv relocate"),
    VerbClass.READ: word_set(
        "read open look see inspect review check examine analyse analyze explain describe"
        " show print cat load parse import use study compare count find search grep follow"
        " consult understand list plot visualise visualize"
    ),
    VerbClass.RUN: word_set("run execute launch start invoke rerun re-run"),
    VerbClass.REMOVE: word_set("delete remove rm drop erase unlink purge discard"),
}

_THIRD_PERSON_ENDINGS = ("es", "s")


def verb_class(word: str, *, described: bool = False) -> VerbClass | None:
    """The class of ``word`` as an imperative (base form) or, when ``described`` (inside a
    relative clause: "a script that reads data.csv"), also as a third-person form."""
    forms = [word]
    if described:
        forms += [word[: -len(end)] for end in _THIRD_PERSON_ENDINGS if word.endswith(end)]
    for form in forms:
        for cls, verbs in VERBS.items():
            if form in verbs:
                return cls
    return None


TARGET_PREPOSITIONS = word_set("to into in inside as under within onto")
"""After these, a file is where the verb's result goes ("add a function to calc.py")."""

REFERENCE_PREPOSITIONS = word_set(
    "of for from about on based using with like than per according via against by over"
)
"""After these, a file is only a reference ("tests for calc.py", "a summary of README.md")."""

RELATIVE_PRONOUNS = word_set("that which who whose")
"""A relative clause describes what the program does, not what the agent does."""

HOW_WORDS = word_set("how why whether what")
"""After no verb or a reading one, these open a clause about the work, not an order."""

CLAUSE_RESET_WORDS = word_set("then afterwards finally next also")
"""These open a new instruction: the relative clause, if any, has ended."""

VERB_OPENERS = word_set("and then please you u to also first now just finally next afterwards or")
"""A verb is read as one at the start of a sentence or clause, or after one of these."""

RUN_REFERENCES = word_set("it them this script program file code app application")
"""After "run": a reference to the program the task names ("create hello.py and run it")."""

COMMAND_NOUNS = word_set("command commands")

CODE_NOUNS = word_set(
    "function functions method methods class classes module modules script scripts program"
    " programs app application api endpoint endpoints cli bug bugs feature decorator"
    " component widget parser server library package code codebase notebook cell cells"
    " dockerfile makefile hook route handler routine subroutine algorithm implementation"
    " lambda regex exception struct enum interface constructor property"
)
"""Nouns that, as the object of a writing verb, ask for code ("add a function")."""

CODE_LANGUAGES = word_set(
    "python javascript typescript js ts rust golang java kotlin cpp sql bash shell html css"
    " react vue svelte flask django fastapi node nodejs ruby php perl lua julia swift"
)
"""Languages that, in the object of a writing verb, ask for code ("a python file")."""

TEST_NOUNS = word_set("test tests testcase testcases unittest unittests pytest spec specs")
"""Nouns that ask for tests ("a pytest test", "make the tests pass")."""

PASS_WORDS = word_set("pass passes passing green succeed")
"""After a test noun: the tests must run and pass."""

CONTENT_NOUNS = word_set(
    "summary summaries note notes doc docs documentation readme changelog essay article"
    " report paragraph paragraphs story poem poems letter email list todo outline plan"
    " agenda description writeup memo guide tutorial faq text prose table data csv tsv"
    " markdown section chapter bullet bullets minutes recipe haiku limerick blog post"
    " abstract glossary journal transcript sentence sentences line lines word words entry"
    " entries row rows record records"
)
"""Nouns that, as the object of a writing verb, ask for content a read-back can verify."""

FILE_NOUNS = word_set("file files")
"""A bare "file" asks for content ("write two files") unless a code word said otherwise."""

CONTENT_VERBS = word_set("document summarise summarize jot transcribe")
"""Verbs whose result is prose whatever their object ("document the functions")."""

SKIPPED_FILE_NAMES = word_set(
    "node.js vue.js next.js nuxt.js react.js express.js three.js d3.js chart.js ember.js"
    " backbone.js angular.js socket.io asp.net"
)
"""Names of technologies that look like files."""

RUNNABLE_SUFFIXES = word_set(".py .sh .bash .js .mjs .cjs .ts .rb .pl .php .r .lua .jl .go .ipynb")
"""Files that a "run it" can mean (a notebook runs through ``run_cells``)."""

ARTIFACT_PLACES: dict[str, tuple[str, ...]] = {
    "readme": ("readme*",),
    "changelog": ("changelog*", "changes*", "history*"),
    "docs": ("docs/**", "doc/**"),
    "documentation": ("docs/**", "doc/**", "readme*"),
    "notes": ("notes*",),
    "todo": ("todo*",),
    "license": ("license*", "licence*"),
}
"""Artifact nouns that name a place, matched loosely: ``name*`` is a file whose name starts
with it (any case, any folder: README -> README.md, CHANGELOG.rst), ``dir/**`` anything under
a folder of that name ("Update the docs" -> docs/index.md)."""

UNRELATED_WORDS = word_set(
    "the and for with from into this that these those your our my its about all any new"
    " some one two three add write make create update put save"
)
"""Words of a task that never relate a changed file to it ("Write a README" + file.txt)."""
