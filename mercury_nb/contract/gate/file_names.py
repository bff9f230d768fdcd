"""The one reader of file names in prose, shared by the intent, the task reading and grounding.

A file name is ``name.ext`` (optionally under folders: ``src/a.py``, ``./notes.txt``,
``~/data/x.csv``) whose extension is one of :data:`EXTENSIONS`: source, docs and markup
(``rst``, ``adoc``, ``org``, ``tex``, ``mdx``...), data and office files (``xlsx``,
``parquet``...), configs and logs. What it is not:

* a version number (``1.2``, ``v3.11``, ``python3.11``): an extension starts with a letter;
* a domain (``example.com``, ``github.io``, ``www.python.org``): web-only suffixes are not
  extensions, and a name that opens with ``www.`` is a host; ``org`` stays an extension
  (Org mode: ``poem.org``);
* an abbreviation (``e.g.``, ``i.e.``): one-letter suffixes other than source ones (``c``,
  ``h``, ``r``) are not extensions, and ``e.g`` is no name;
* a sentence's full stop: ``README.md.`` is ``README.md``.
"""

from __future__ import annotations

import re

from mercury_nb.contract.word_sets import word_set

EXTENSIONS: frozenset[str] = word_set(
    # code
    "py pyi pyx pxd ipynb js mjs cjs ts mts cts tsx jsx vue svelte astro rs go java kt kts"
    " scala sc groovy gradle c h cc cpp cxx hpp hh hxx m mm swift cs fs fsx vb dart zig nim"
    " odin v sv vhd vhdl rb php pl pm lua jl r rmd ex exs erl hrl hs lhs elm clj cljs edn"
    " ml mli sml rkt scm lisp el f f90 f95 for asm s wat wasm sol cu cl glsl hlsl metal"
    " sh bash zsh fish ps1 psm1 bat cmd awk sed tcl"
    # docs, markup and prose
    " md markdown mdx rst adoc asciidoc org tex latex bib sty cls txt text rtf doc docx odt"
    " pdf epub html htm xhtml xml css scss sass less styl tpl jinja jinja2 j2 hbs mustache"
    " ejs erb haml pug liquid njk man"
    # data, config and logs
    " json jsonl ndjson json5 yaml yml toml ini cfg conf config env properties plist csv"
    " tsv psv xls xlsx xlsm ods parquet feather arrow avro orc h5 hdf5 nc npy npz pkl"
    " pickle sqlite sqlite3 db sql graphql gql proto lock log out err diff patch"
    " tf tfvars hcl nix dockerfile mk cmake ninja bazel bzl"
    # media and archives
    " svg png jpg jpeg gif webp bmp ico tif tiff mp3 wav flac ogg mp4 mov webm avi"
    " zip tar gz tgz bz2 xz zst 7z whl"
    " pem crt key pub"
)
"""The extensions a file name in prose may end with (table-tested)."""

_ALTERNATION = "|".join(sorted((re.escape(e) for e in EXTENSIONS), key=len, reverse=True))

FILE_NAME_PATTERN = (
    r"(?!www\.)(?:~|\.{1,2})?[/\\]?(?:[\w.-]+[/\\])*[\w-][\w.-]*"
    rf"\.(?:{_ALTERNATION})(?![\w/\\-])"
)
"""The regular expression of a file name (to embed in a larger tokenizer; IGNORECASE)."""

NOT_INSIDE_A_NAME = r"(?<![\w/\\.~-])"
"""Put before the pattern: a name starts where no name goes on (``www.python.org``)."""
FILE_NAME = re.compile(NOT_INSIDE_A_NAME + FILE_NAME_PATTERN, re.IGNORECASE)
"""A file name in prose (see the module docstring)."""
_WHOLE = re.compile(FILE_NAME_PATTERN, re.IGNORECASE)
_QUOTED = re.compile(r"`([^`\n]+)`")


def is_file_name(text: str) -> bool:
    """True when the whole of ``text`` is one file name."""
    return _WHOLE.fullmatch(text.strip()) is not None


def file_names(text: str) -> tuple[str, ...]:
    """The file names ``text`` mentions in prose, as written, in order, each once (inline
    code counts when it holds exactly one file name: ```hello world.py```)."""
    found: list[str] = []
    position = 0
    for quoted in _QUOTED.finditer(text):
        found.extend(m.group(0) for m in FILE_NAME.finditer(text, position, quoted.start()))
        inner = quoted.group(1).strip()
        if inner and _looks_like_path(inner):
            found.append(inner)
        position = quoted.end()
    found.extend(m.group(0) for m in FILE_NAME.finditer(text, position))
    return tuple(dict.fromkeys(found))


def _looks_like_path(inner: str) -> bool:
    """Inline code naming a file: one name with an extension, spaces allowed."""
    name = inner.rsplit("/", 1)[-1]
    stem, dot, ext = name.rpartition(".")
    return bool(dot and stem.strip() and ext.lower() in EXTENSIONS) and "\n" not in inner
