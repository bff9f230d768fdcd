"""The evidence rule: a check after the last change that exited 0, judged by exit code and order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from mercury_nb.contract.gate.check_commands import (
    CheckKind,
    check_kinds,
    executes_notebooks,
    is_verification_command,
    touches_notebooks,
)
from mercury_nb.contract.gate.requested_runs import NO_RUNS, RequestedRuns, is_requested_run
from mercury_nb.contract.gate.uncounted_checks import UncountedCheck, uncounted_check

__all__ = [
    "CheckFailed",
    "CheckKind",
    "CheckRecord",
    "CheckStale",
    "Evidence",
    "EvidenceVerdict",
    "NoCheck",
    "ReadBack",
    "RequestedRuns",
    "UncountedCheck",
    "Verified",
    "check_kinds",
    "executes_notebooks",
    "is_check",
    "is_verification_command",
    "judge_evidence",
    "touches_notebooks",
]


@dataclass(frozen=True)
class CheckRecord:
    """One tool call of the task that may be a check. ``seq`` orders every tool call."""

    command: str
    exit_code: int | None
    seq: int
    kind: Literal["command", "notebook", "kernel"] = "command"
    """``kernel``: cells of a notebook that ran in the user's kernel (``kernel_cells``)."""
    timed_out: bool = False
    path: str = ""
    """For a notebook run: the notebook (workspace-relative)."""
    failure: str = ""
    """For a failed notebook run: its failing cell and the error's last line."""
    partial: bool = False
    """A notebook run of some of its cells only: its failure counts, its pass is no check."""

    @property
    def passed(self) -> bool:
        """Exit 0 and finished in time. No exit code or a timeout is a failure."""
        return self.exit_code == 0 and not self.timed_out


@dataclass(frozen=True)
class Verified:
    """A check that ran after the last change and passed."""

    check: CheckRecord

    def __post_init__(self) -> None:
        if not self.check.passed:
            raise ValueError(f"a failed check is not evidence: {self.check!r}")


@dataclass(frozen=True)
class ReadBack:
    """Evidence for changes to non-code files only: the measured change summary and a
    read-back of these files."""

    paths: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.paths:
            raise ValueError("a read-back needs at least one changed file")


Evidence = Verified | ReadBack


@dataclass(frozen=True)
class NoCheck:
    """No verification check ran at all. ``uncounted``: the newest run after the last
    change that ran a check in a way that does not count (piped, masked, a dry run...)."""

    uncounted: UncountedCheck | None = None


@dataclass(frozen=True)
class CheckFailed:
    """A check after the last change failed and no later run of it passed."""

    check: CheckRecord


@dataclass(frozen=True)
class CheckStale:
    """The newest check ran before the latest change (``uncounted`` as in :class:`NoCheck`)."""

    check: CheckRecord
    uncounted: UncountedCheck | None = None


EvidenceVerdict = Verified | NoCheck | CheckFailed | CheckStale


def is_check(
    record: CheckRecord, *, notebooks_only: bool = False, runs: RequestedRuns = NO_RUNS
) -> bool:
    """A notebook execution is always a check; a command is one when its words say so, or
    when it is a run the task asked for (``runs``; not when notebooks changed)."""
    if record.kind == "notebook":
        return not (record.partial and record.passed)
    if notebooks_only:
        return executes_notebooks(record.command)
    return is_verification_command(record.command) or is_requested_run(record.command, runs)


def judge_evidence(
    records: Sequence[CheckRecord],
    last_mutation_seq: int | None,
    *,
    notebooks_changed: bool = False,
    runs: RequestedRuns = NO_RUNS,
) -> EvidenceVerdict:
    """Judge by exit code and order only, never by output text.

    Evidence is a check that ran after the last successful mutation (``seq`` greater
    than ``last_mutation_seq``; None means nothing changed) and exited 0. Among the
    checks after the change, a failure is only cleared by a later passing run of the
    same command, so a passing lint cannot hide failing tests. When notebooks changed,
    only a notebook execution counts; a notebook run may be the last change itself (run_cells
    writes the outputs of its run), and a failure in any run of a notebook's cells is cleared
    only by a later run of every cell of that notebook. A verification command must not itself be
    reported as the last mutation; a run the task asked for (``runs``: "run hello.py")
    may be, since what it writes is part of what was asked.
    """
    checks = [r for r in records if is_check(r, notebooks_only=notebooks_changed, runs=runs)]
    after = [r for r in checks if _after(r, last_mutation_seq, runs, notebooks_changed)]
    if after:
        newest_per_command: dict[tuple[str, str], CheckRecord] = {}
        for record in sorted(after, key=lambda r: r.seq):
            newest_per_command[_same_check(record)] = record
        failed = [r for r in newest_per_command.values() if not r.passed]
        if failed:
            return CheckFailed(max(failed, key=lambda r: r.seq))
        return Verified(max(after, key=lambda r: r.seq))
    uncounted = _newest_uncounted(records, last_mutation_seq)
    if checks:
        return CheckStale(max(checks, key=lambda r: r.seq), uncounted)
    return NoCheck(uncounted)


def _same_check(record: CheckRecord) -> tuple[str, str]:
    """What a later run must be to clear a failure: the same command; for a notebook, any
    later run of every cell of the same notebook (one of some cells is no check when it
    passes)."""
    if record.kind == "notebook" and record.path:
        return (record.kind, record.path)
    return (record.kind, " ".join(record.command.split()))


def _after(
    record: CheckRecord, last_mutation_seq: int | None, runs: RequestedRuns, notebooks: bool
) -> bool:
    if last_mutation_seq is None or record.seq > last_mutation_seq:
        return True
    if record.seq == last_mutation_seq and record.kind == "notebook":
        return True  # run_cells: what it wrote is the outputs of the run itself
    requested = (record.seq == last_mutation_seq and record.kind == "command" and not notebooks
                 and is_requested_run(record.command, runs))
    return requested


def _newest_uncounted(
    records: Sequence[CheckRecord], last_mutation_seq: int | None
) -> UncountedCheck | None:
    """The newest command since the last change that ran a check which did not count (it
    may be that change itself: a check whose exit code is not seen may also write files)."""
    for record in sorted(records, key=lambda r: r.seq, reverse=True):
        if record.kind != "command":
            continue
        if last_mutation_seq is not None and record.seq < last_mutation_seq:
            break
        found = uncounted_check(record.command)
        if found is not None:
            return found
    return None
