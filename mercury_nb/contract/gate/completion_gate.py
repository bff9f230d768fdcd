"""The verification gate: evidence-gated completion after a text-stop turn, as a state machine.

The loop consults the gate only when a turn ended ``text-stop``. The rule:

* nothing changed on disk (measured) -> ``CompleteNoChanges``, never a forced round;
* a passing check after the last change -> ``Complete(Verified)``;
* only non-code files changed (prose and tabular data, see ``NON_CODE_SUFFIXES``) and no
  check failed after the change -> ``Complete(ReadBack)``: the measured change summary
  and a read-back of the files are the evidence;
* otherwise, in execute mode, exactly one forced verification round per gate
  (``tool_choice`` required); after it, or at once in chat mode, a missing, failed or
  stale check pauses honestly.

The task's intent does not enter: a question that changed files is held to the same
rule, and a question with no changes has nothing to verify. (The narration guard uses
the intent; see ``task_intent``.)
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal, assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.gate.verification import (
    CheckFailed,
    CheckRecord,
    CheckStale,
    EvidenceVerdict,
    NoCheck,
    ReadBack,
    UncountedCheck,
    Verified,
    touches_notebooks,
)

VERIFICATION_NOTICE = "Checking my work before I call it done — running the build/tests now…"
"""Shown to the user when the forced verification round starts."""

FORCED_VERIFICATION_ROUNDS = 1
"""Forced verification rounds per gate: exactly one."""

NON_CODE_SUFFIXES = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc", ".org", ".csv", ".tsv"})
"""Prose and tabular data: nothing builds or imports them, so a read-back is evidence.

Configuration (.json, .yaml, .yml, .toml, .ini, .cfg), markup that runs (.html, .svg)
and notebooks are code: builds, packagers and CI read them, and only a check can show
they still work. ``requirements*.txt``, ``constraints*.txt`` and ``CMakeLists.txt`` are
code despite their suffix."""

NON_CODE_NAMES = frozenset(
    {"LICENSE", "LICENCE", "COPYING", "AUTHORS", "CONTRIBUTORS", "NOTICE", "CHANGELOG"}
)
"""Suffix-less files that are prose."""

_CODE_TEXT_PREFIXES = ("requirements", "constraints", "cmakelists")


def is_non_code_path(path: str) -> bool:
    """True for prose and tabular data files (see ``NON_CODE_SUFFIXES``)."""
    name = posixpath.basename(path.replace("\\", "/"))
    stem, suffix = posixpath.splitext(name)
    if name in NON_CODE_NAMES:
        return True
    if stem.lower().startswith(_CODE_TEXT_PREFIXES):
        return False
    return suffix.lower() in NON_CODE_SUFFIXES


def only_non_code(paths: Iterable[str]) -> bool:
    """True when there is at least one path and every one is non-code."""
    listed = list(paths)
    return bool(listed) and all(is_non_code_path(p) for p in listed)


@dataclass(frozen=True)
class GateState:
    """How many verification rounds this gate has forced so far."""

    forced_rounds: int = 0


@dataclass(frozen=True)
class GateObservation:
    """What the loop measured when the turn ended ``text-stop``.

    ``changed_paths`` comes from the git/snapshot change summary, never from the model;
    ``evidence`` from ``judge_evidence`` over the task's tool calls.
    """

    changed_paths: tuple[str, ...]
    evidence: EvidenceVerdict


@dataclass(frozen=True)
class Complete:
    """Done, with evidence."""

    evidence: Verified | ReadBack


@dataclass(frozen=True)
class CompleteNoChanges:
    """Done; nothing changed on disk, so there is nothing to verify."""


@dataclass(frozen=True)
class ForceVerification:
    """Run one more round whose first step must call a tool, with ``prompt`` appended."""

    prompt: str
    notice: str = VERIFICATION_NOTICE
    tool_choice: Literal["required"] = "required"


@dataclass(frozen=True)
class PauseVerificationFailed:
    """Pause honestly: the changes are in, but no passing check ran after them."""

    last_check: CheckRecord | None
    stale: bool


GateDecision = Complete | CompleteNoChanges | ForceVerification | PauseVerificationFailed

_PROMPT_HEAD = "[SYSTEM: VERIFY] You changed files, but {reason}. The task is NOT done yet."
_PROMPT_CODE = (
    " Run the project's build, tests or type check now with run_command (for example"
    " pytest, python -m unittest, npm test, make, tsc, mypy, cargo test, go test) and fix"
    " whatever fails. Run the check on its own — not piped into another command, not"
    " followed by `|| true` or `; echo` — because its exit code is the evidence."
)
_PROMPT_NOTEBOOKS = (
    " Notebooks changed: execute each changed notebook top to bottom in a fresh kernel"
    " (run_command: jupyter execute <path>.ipynb) and fix any cell that raises."
)
_PROMPT_TAIL = " Changed: {paths}."
_LISTED_PATHS = 10


_UNCOUNTED = (
    " Your run `{run}` did not count as evidence: {why}. Run `{check}` on its own so that its"
    " exit code is the evidence."
)


def uncounted_note(uncounted: UncountedCheck | None) -> str:
    """Why the model's last check did not count and how to run it so that it does."""
    if uncounted is None:
        return ""
    if uncounted.why == "listing":
        check = " ".join(w for w in uncounted.check.split() if w != uncounted.detail)
    else:
        check = uncounted.check
    return _UNCOUNTED.format(run=uncounted.run, why=uncounted.explanation(), check=check)


def _reason(evidence: EvidenceVerdict) -> str:
    match evidence:
        case NoCheck():
            return "no build, test or type check ran after your last change"
        case CheckFailed(check=check):
            return f"the check `{check.command}` {describe_result(check)} after your last change"
        case CheckStale(check=check):
            return f"the last check `{check.command}` ran before your latest change"
        case Verified():
            return "a check passed"
        case _ as unreachable:
            assert_never(unreachable)


def describe_result(check: CheckRecord) -> str:
    """``passed``, ``timed out``, ``exited N`` or ``ended without an exit code``."""
    if check.timed_out:
        return "timed out"
    if check.exit_code is None:
        return "ended without an exit code"
    return "passed" if check.exit_code == 0 else f"exited {check.exit_code}"


def verification_prompt(evidence: EvidenceVerdict, changed_paths: tuple[str, ...]) -> str:
    """The message appended for the forced verification round."""
    listed = ", ".join(changed_paths[:_LISTED_PATHS])
    if len(changed_paths) > _LISTED_PATHS:
        listed += f" and {len(changed_paths) - _LISTED_PATHS} more"
    body = _PROMPT_NOTEBOOKS if touches_notebooks(changed_paths) else _PROMPT_CODE
    uncounted = evidence.uncounted if isinstance(evidence, NoCheck | CheckStale) else None
    head = _PROMPT_HEAD.format(reason=_reason(evidence)) + uncounted_note(uncounted)
    return head + body + _PROMPT_TAIL.format(paths=listed)


def step_gate(
    state: GateState, obs: GateObservation, config: MercuryConfig
) -> tuple[GateState, GateDecision]:
    """One gate step; see the module docstring for the rule. ``config.mode`` is the
    task's mode (``--chat`` on the cell sets it): ``chat`` never forces a round."""
    if not obs.changed_paths:
        return state, CompleteNoChanges()
    last_check: CheckRecord | None
    match obs.evidence:
        case Verified() as verified:
            return state, Complete(verified)
        case NoCheck():
            last_check, stale, failed = None, False, False
        case CheckFailed(check=check):
            last_check, stale, failed = check, False, True
        case CheckStale(check=check):
            last_check, stale, failed = check, True, False
        case _ as unreachable:
            assert_never(unreachable)
    if not failed and only_non_code(obs.changed_paths):
        return state, Complete(ReadBack(obs.changed_paths))
    if config.mode == "execute" and state.forced_rounds < FORCED_VERIFICATION_ROUNDS:
        prompt = verification_prompt(obs.evidence, obs.changed_paths)
        return replace(state, forced_rounds=state.forced_rounds + 1), ForceVerification(prompt)
    return state, PauseVerificationFailed(last_check=last_check, stale=stale)
