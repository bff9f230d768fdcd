"""The ``%%mercury`` cell magic and registering the extension (its traitlets: ``traits``).

Loading this module must stay light: config, the agent loop, widgets and litellm are
imported when a cell runs, never when ``%load_ext mercury_nb`` registers the magic. The line
magic ``%mercury tasks | show ID | continue [ID]`` is another method of :class:`MercuryMagics`;
it and the ledger side of cells live in :mod:`mercury_nb.kernel.ledger_magics`. Loading also
pauses tasks left running by a dead process (see :func:`register`); in a verification kernel
nothing starts (:mod:`mercury_nb.kernel.verification`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from IPython.core import magic_arguments as _magic_arguments
from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

from mercury_nb.contract.permissions import PERMISSION_MODES
from mercury_nb.kernel import verification
from mercury_nb.kernel.traits import Mercury
from mercury_nb.kernel.wait_cells import HelpCellTransformer, WaitCellTransformer, can_await_cells

if TYPE_CHECKING:
    import argparse

    from mercury_nb.contract.config import MercuryConfig

MAGIC_NAME = "mercury"

_F = TypeVar("_F", bound=Callable[..., Any])


class _Decorator(Protocol):
    def __call__(self, func: _F, /) -> _F: ...


# IPython's magic_arguments is untyped; these typed aliases keep the magic typed.
magic_arguments: Callable[..., _Decorator] = _magic_arguments.magic_arguments
argument: Callable[..., _Decorator] = _magic_arguments.argument
named_line_magic: Callable[[str], _Decorator] = cast(Any, line_magic)


MercuryConfigurable = Mercury


@dataclass(frozen=True)
class CellRequest:
    task: str
    args: argparse.Namespace


@magics_class
class MercuryMagics(Magics):
    """``%%mercury``: the cell body is a task for the agent (``continue [ID]`` resumes one);
    ``%mercury tasks | show ID | continue [ID]``: the work ledger."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell=shell)
        self.settings = Mercury(parent=shell)
        shell.configurables.append(self.settings)

    @magic_arguments(name=f"%{MAGIC_NAME}")  # IPython prefixes one "%": the usage reads %%mercury
    @argument("--model", metavar="M", help="model, in litellm naming (scripted/<name> for tests)")
    @argument("--fallback", metavar="M2", action="append", default=None,
              help="a fallback model; repeat for more")
    @argument("--max-steps", metavar="N", type=int, default=None, help="steps per step budget")
    @argument("--max-cost", metavar="USD", type=float, default=None, dest="max_cost_usd",
              help="pause once the task's estimated cost reaches USD")
    @argument("--max-tokens", metavar="N", type=int, default=None,
              help="pause once the task has used N tokens")
    @argument("--workdir", metavar="DIR", default=None, help="workspace root (default: cwd)")
    @argument("--api-base", metavar="URL", default=None, help="OpenAI-compatible base URL")
    @argument("--pass-env", metavar="NAME", action="append", default=None,
              help="hand a variable withheld as a secret to commands; repeat for more")
    @argument("--sandbox", metavar="MODE", choices=("off", "workspace-write"), default=None,
              help="workspace-write: every command under bubblewrap")
    @argument("--sandbox-network", action="store_true",
              help="let sandboxed commands reach the network")
    @argument("--permissions", metavar="MODE", choices=PERMISSION_MODES, default=None,
              help="read-only, ask, edits (default) or auto")
    @argument("--allow", metavar="RULE", action="append", default=None,
              help="run commands matching RULE unasked; repeat for more")
    @argument("--wait", action="store_true", help="block the cell until the task ends")
    @argument("--chat", action="store_true", help="answer a question; no forced rounds")
    @argument("--yes", action="store_true", help="take recommended options without asking")
    @cell_magic
    def mercury(self, line: str, cell: str) -> Any:
        """Run the cell body as a task for the mercury agent.

        By default the task runs on the kernel's loop and the cell returns at once; a live
        widget (or text, with MERCURY_PLAIN=1) shows progress and the final verdict.
        A body of ``continue`` (or ``continue ID``) resumes the latest paused task of the
        workspace (or that task) from its checkpoint.
        """
        if verification.verifying():  # a notebook re-run as evidence starts no agent
            return verification.skip(self.shell, line, wants_wait)
        request = self._parse(line, cell)
        if request is None:
            return None
        from mercury_nb.runs.planning import continue_request, continue_words

        resume, task_id = continue_request(request.task)
        return self.submit_cell("" if resume else request.task, request.args, resume=resume,
                                task_id=task_id, words=continue_words(request.task))

    @named_line_magic(MAGIC_NAME)
    def mercury_line(self, line: str) -> Any:
        """``%mercury tasks`` lists the work ledger; ``%mercury show ID`` shows one task;
        ``%mercury continue [ID]`` resumes a paused task (the latest of this workspace);
        ``%mercury --help`` prints the help of both magics."""
        from mercury_nb.kernel.ledger_magics import LINE_USAGE, line_command

        if verification.verifying():  # no continue, no stop, no ledger in a verification run
            return verification.skip(self.shell)
        if asks_for_help(line):
            print(f"{help_text()}\n{LINE_USAGE}")
            return None
        return line_command(self, line)

    def parse_flags(self, line: str) -> argparse.Namespace:
        """The flags of a ``%%mercury`` line (``UsageError`` / ``ValueError`` when bad)."""
        return parse_line(line)

    # --- steps -------------------------------------------------------------------------
    def _parse(self, line: str, cell: str) -> CellRequest | None:
        if asks_for_help(line):
            print(help_text())
            return None
        try:
            args = parse_line(line)
        except SystemExit:  # argparse exited (IPython's parser raises UsageError instead)
            return None
        except ValueError as exc:  # unbalanced quotes
            raise UsageError(f"{exc}\n{usage()}") from None
        except UsageError as exc:
            raise UsageError(f"{exc}\n{usage()}") from None
        return CellRequest(task=cell or "", args=args)  # stripped once, by the request

    def _config(self, args: argparse.Namespace) -> MercuryConfig:
        """These flags' settings, for the ledger commands (a refusal raises ``UsageError``)."""
        from mercury_nb.runs.lookup import Refusal
        from mercury_nb.runs.request import RunRequest
        from mercury_nb.runs.resolve import resolve_settings

        config = resolve_settings(RunRequest(flags=vars(args),
                                             traitlets=self.settings.base_values()))
        if isinstance(config, Refusal):
            from mercury_nb.kernel.cell_refusals import refusal_text

            raise UsageError(refusal_text(config, usage()))
        return config

    def _waits(self, wait: bool) -> bool:
        """Whether the cell awaits what the magic returns (``--wait`` inside a loop)."""
        from mercury_nb.kernel import scheduling

        return wait and scheduling.running_loop() is not None and can_await_cells(self.shell)

    def submit_cell(self, task: str, args: argparse.Namespace, *, resume: bool = False,
                    task_id: str | None = None, words: str | None = None) -> Any:
        """Through the one door: the cell's view subscribes to the one Run (Stop, ``--wait``)."""
        from mercury_nb.kernel import scheduling
        from mercury_nb.kernel.ledger_magics import NothingToWait
        from mercury_nb.kernel.user_namespace import CellKernel
        from mercury_nb.runs import submit
        from mercury_nb.runs.lookup import Refusal
        from mercury_nb.runs.request import RunRequest
        from mercury_nb.ui.views import ViewApprover, guarded_sink, make_view

        wait = args.wait
        loop = scheduling.running_loop()
        waiting = self._waits(wait)
        attached = loop is None or waiting
        views: list[Any] = []

        def view_for(config: MercuryConfig) -> tuple[Any, Any]:
            if wait and loop is not None and not waiting:
                print("--wait needs top-level await (%autoawait asyncio); "
                      "running in the background.")
            view = make_view(self.shell, max_updates_per_s=config.ui_max_updates_per_s,
                             attached=attached, model=config.model)
            views.append(view)
            approver.view = view
            return guarded_sink(view), getattr(view, "ask", None)

        approver = ViewApprover()  # a --wait cell (nbclient, headless) asks nobody: denied
        run = submit(RunRequest(kernel=CellKernel(self.shell), approver=None if wait else approver,
            approver_in="cell",
            task=task, resume=resume, task_id=task_id, words=words, flags=vars(args),
            traitlets=self.settings.base_values(), view_for=view_for, report=print,
            refuse_missing_key=True,
        ), loop=loop if loop is not None else scheduling.cell_loop())
        if isinstance(run, Refusal):
            from mercury_nb.kernel.cell_refusals import CELL_USAGE_REFUSALS, refusal_text

            if run.kind in CELL_USAGE_REFUSALS:
                raise UsageError(refusal_text(run, usage()))
            print(refusal_text(run, usage()))  # once; a --wait cell awaits what we return
            return NothingToWait() if waiting else None
        if loop is None:
            scheduling.run_until_done(run, views[0])
            return None
        scheduling.show(run, views[0], attached=attached)
        return scheduling.WaitForTask(run) if waiting else None


def _parser() -> Any:
    """The argparse parser IPython built from the ``@argument`` decorators."""
    return cast(Any, MercuryMagics.mercury).parser


def parse_line(line: str) -> argparse.Namespace:
    """Parse a ``%%mercury`` argument line; raises ``UsageError`` (or ``ValueError`` on quoting).
    A line is parsed once: the ``--wait`` transformer's parse of a cell's line is the one
    its magic call gets (a fresh copy of it)."""
    import argparse

    return argparse.Namespace(**copy.deepcopy(dict(_parsed(line))))


@functools.lru_cache(maxsize=32)
def _parsed(line: str) -> tuple[tuple[str, Any], ...]:
    args: argparse.Namespace = _parser().parse_argstring(line)
    if args.allow:  # IPython's split keeps the quotes of a quoted word
        args.allow = [_unquoted(rule) for rule in args.allow]
    return tuple(vars(args).items())


def _unquoted(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word


def usage() -> str:
    """The one-line usage of ``%%mercury``."""
    raw = _parser().format_usage()
    return "usage: " + " ".join(raw.replace("::", " ").split())  # IPython's formatter adds "::"


def help_text() -> str:
    """What ``%%mercury --help`` prints: the usage, what the magic does, every flag."""
    raw: str = _parser().format_help()  # "::\n\n  %%mercury [...]\n   [...]\n\n<doc>..."
    synopsis, _, rest = raw.removeprefix("::").strip("\n").partition("\n\n")
    first, *more = (line.strip() for line in synopsis.splitlines())
    indent = " " * len(f"usage: %%{MAGIC_NAME} ")
    return "\n".join([f"usage: {first}", *(indent + line for line in more), "", rest])


def asks_for_help(line: str) -> bool:
    """Whether a ``%%mercury`` argument line has ``-h`` or ``--help``."""
    return any(token in ("-h", "--help") for token in line.split())


def wants_wait(line: str) -> bool:
    """Whether a ``%%mercury`` argument line asks for ``--wait`` (help or errors: no)."""
    if asks_for_help(line):
        return False
    try:
        args = parse_line(line)
    except (UsageError, ValueError, SystemExit):
        return False
    return bool(args.wait)


def register(shell: Any) -> None:
    """Register the magics and the ``--wait`` transformer (idempotent), then pause tasks that
    a dead process left running in the work ledger (and report a damaged ledger file). A
    shutdown of the kernel then ends its running tasks like Stop (:mod:`~mercury_nb.kernel.
    shutdown`)."""
    from mercury_nb.kernel.ledger_magics import recover_at_load
    from mercury_nb.kernel.shutdown import install as install_shutdown_hooks

    unregister(shell)
    shell.register_magics(MercuryMagics)
    shell.input_transformers_post.append(WaitCellTransformer(shell, MAGIC_NAME, wants_wait))
    shell.input_transformers_post.append(HelpCellTransformer(MAGIC_NAME, asks_for_help))
    magics = shell.magics_manager.registry.get(MercuryMagics.__name__)
    settings = getattr(magics, "settings", None)
    if not verification.verifying():  # a verification kernel touches no ledger
        recover_at_load(settings.base_values() if isinstance(settings, Mercury) else {})
    install_shutdown_hooks(shell)


def unregister(shell: Any) -> None:
    """Undo :func:`register`."""
    shell.input_transformers_post[:] = [
        t for t in shell.input_transformers_post
        if not isinstance(t, WaitCellTransformer | HelpCellTransformer)
    ]
    shell.configurables[:] = [c for c in shell.configurables if not isinstance(c, Mercury)]
    magics = shell.magics_manager.magics
    magics["cell"].pop(MAGIC_NAME, None)
    magics["line"].pop(MAGIC_NAME, None)
    shell.magics_manager.registry.pop(MercuryMagics.__name__, None)
