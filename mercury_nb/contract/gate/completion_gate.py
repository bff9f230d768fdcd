"""The verification gate: evidence-gated completion after a text-stop turn, as a state machine.

The loop consults the gate only when a turn ended ``text-stop``. The rule:

* a file the task asks to create or write is missing on disk (measured) -> in execute
  mode one forced round naming it, then ``PauseFilesMissing`` ("hello.py was not
  created"), whatever else happened, even when nothing changed (the narration guard ran
  first, so some change was attempted: a command that wrote nothing is no hello.py);
* a work task that asks to run something (``run_evidence``): only a passing run of what
  it asked for after the last change verifies it, with or without changes, never
  ``CompleteNoChanges``; a missing or failed run gets the one forced round naming it,
  then ``PauseVerificationFailed`` naming it;
* nothing changed on disk (measured) -> ``CompleteNoChanges``, never a forced round (a
  turn that attempted no change is the narration guard's; one that asked the user
  something is answered);
* a passing check after the last change -> ``Complete(Verified)``; a run the task asked
  for ("run hello.py" -> ``python hello.py``) is such a check;
* only prose or data changed, the task asks for that kind of content (notes, docs,
  data) and no code, tests or run, the changed files are where the task said (see
  ``TaskRequirements.read_back_verifies``) and no check failed after the change ->
  ``Complete(ReadBack)``: the measured change summary and a read-back are the evidence;
* otherwise, in execute mode, exactly one forced verification round per gate
  (``tool_choice`` required); after it, or at once in chat mode, a missing, failed or
  stale check pauses honestly.

The task's words enter only through its requirements (``task_requirements``): a question
that changed files asks for no content, so a read-back does not verify it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.gate.file_kinds import (  # noqa: F401 (re-exported)
    NON_CODE_NAMES,
    NON_CODE_SUFFIXES,
    is_non_code_path,
    only_non_code,
)
from mercury_nb.contract.gate.run_evidence import RunAnswer, run_prompt, task_evidence
from mercury_nb.contract.gate.task_requirements import NOTHING_ASKED, TaskRequirements
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

@dataclass(frozen=True)
class GateState:
    """How many verification rounds this gate has forced so far."""

    forced_rounds: int = 0


@dataclass(frozen=True)
class GateObservation:
    """What the loop measured when the turn ended ``text-stop``.

    ``changed_paths`` comes from the git/snapshot change summary, never from the model;
    ``evidence`` from ``judge_evidence`` over the task's tool calls; ``requirements`` is
    the reading of the task (the empty reading asks for nothing a read-back verifies);
    ``missing`` the files it asks for that are not on disk (measured); ``run`` what the
    task's commands show of the run a work task asks for (None: it asks none, or is no work).
    """

    changed_paths: tuple[str, ...]
    evidence: EvidenceVerdict
    requirements: TaskRequirements = NOTHING_ASKED
    missing: tuple[str, ...] = ()
    run: RunAnswer | None = None
    deleted: tuple[str, ...] = ()
    """The changed paths that are gone (a deletion reads back only when the task asks it)."""


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
    requested: str = ""
    """The run the task asks for that never passed (``RunAnswer.wanted``), or empty."""


@dataclass(frozen=True)
class PauseFilesMissing:
    """Pause honestly: files the task asks for were not created."""

    missing: tuple[str, ...]


GateDecision = (
    Complete | CompleteNoChanges | ForceVerification | PauseVerificationFailed | PauseFilesMissing
)

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
_PROMPT_RUN = (
    " The task asks you to run {runs}: run it now with run_command, on its own, after your"
    " last change; its exit code is the evidence."
)
_PROMPT_PLACE = " The task names {places}, but you changed {others}."
_PROMPT_MISSING = (
    "[SYSTEM: VERIFY] {missing}. The task asks for {listed}, so it is NOT done yet. Create"
    " {them} now with create_file, with the content the task asks for."
)
_LISTED_PATHS = 10


_UNCOUNTED = (
    " Your run `{run}` did not count as evidence: {why}. Run `{check}` on its own so that its"
    " exit code is the evidence."
)


def uncounted_note(uncounted: UncountedCheck | None) -> str:
    """Why the model's last check did not count and how to run it so that it does."""
    if uncounted is None:
        return ""
    if uncounted.why in ("listing", "always-zero"):
        check = " ".join(w for w in uncounted.check.split() if w != uncounted.detail)
    else:
        check = uncounted.check
    return _UNCOUNTED.format(run=uncounted.run, why=uncounted.explanation(), check=check)


def _uncounted_of(evidence: EvidenceVerdict) -> str:
    uncounted = evidence.uncounted if isinstance(evidence, NoCheck | CheckStale) else None
    return uncounted_note(uncounted)


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
    """``passed``, ``timed out``, ``exited N`` or ``ended without an exit code``; a notebook
    run that failed: ``failed at cell N: <the error's last line>``."""
    if check.failure:
        return f"failed at {check.failure}"
    if check.timed_out:
        return "timed out"
    if check.exit_code is None:
        return "ended without an exit code"
    return "passed" if check.exit_code == 0 else f"exited {check.exit_code}"


def _listed(paths: tuple[str, ...]) -> str:
    listed = ", ".join(paths[:_LISTED_PATHS])
    if len(paths) > _LISTED_PATHS:
        listed += f" and {len(paths) - _LISTED_PATHS} more"
    return listed


def not_created_line(missing: tuple[str, ...]) -> str:
    """``hello.py was not created``, one clause per file, joined with "; "."""
    return "; ".join(f"{path} was not created" for path in missing)


def _run_note(requirements: TaskRequirements) -> str:
    runs = requirements.runs
    named = [f"`{c}`" for c in runs.commands] + [
        p for p in runs.programs if not any(p in c for c in runs.commands)
    ]
    return _PROMPT_RUN.format(runs=" and ".join(named)) if named else ""


def _check_body(requirements: TaskRequirements) -> str:
    asks_run = bool(requirements.runs) and "tests" not in requirements.kinds
    return "" if asks_run else _PROMPT_CODE


def verification_prompt(
    evidence: EvidenceVerdict,
    changed_paths: tuple[str, ...],
    requirements: TaskRequirements = NOTHING_ASKED,
) -> str:
    """The message appended for the forced verification round: why there is no evidence,
    where the task wanted the content, the run it asked for, and the check to run (the run
    alone when the task names one and asks for no tests)."""
    body = _PROMPT_NOTEBOOKS if touches_notebooks(changed_paths) else _check_body(requirements)
    uncounted = evidence.uncounted if isinstance(evidence, NoCheck | CheckStale) else None
    head = _PROMPT_HEAD.format(reason=_reason(evidence)) + uncounted_note(uncounted)
    others = tuple(p for p in changed_paths if not requirements.is_place(p))
    place = ""
    if requirements.places and others and not requirements.needs_check:
        place = _PROMPT_PLACE.format(places=_listed(requirements.places), others=_listed(others))
    tail = _PROMPT_TAIL.format(paths=_listed(changed_paths))
    return head + place + _run_note(requirements) + body + tail


_UNCHANGED = " Nothing changed on disk yet."


def missing_prompt(
    missing: tuple[str, ...], changed_paths: tuple[str, ...], requirements: TaskRequirements
) -> str:
    """The message appended for the forced round when files the task asks for are missing."""
    them = "it" if len(missing) == 1 else "them"
    head = _PROMPT_MISSING.format(
        missing=not_created_line(missing), listed=_listed(requirements.must_exist), them=them
    )
    tail = _PROMPT_TAIL.format(paths=_listed(changed_paths)) if changed_paths else _UNCHANGED
    check = _check_body(requirements) if requirements.needs_check else ""
    return head + _run_note(requirements) + check + tail


def step_gate(
    state: GateState, obs: GateObservation, config: MercuryConfig
) -> tuple[GateState, GateDecision]:
    """One gate step; see the module docstring for the rule. ``config.mode`` is the
    task's mode (``--chat`` on the cell sets it): ``chat`` never forces a round."""
    forcing = config.mode == "execute" and state.forced_rounds < FORCED_VERIFICATION_ROUNDS
    if obs.missing:  # also when nothing changed: a command that wrote nothing is no hello.py
        if forcing:
            prompt = missing_prompt(obs.missing, obs.changed_paths, obs.requirements)
            return replace(state, forced_rounds=state.forced_rounds + 1), ForceVerification(prompt)
        return state, PauseFilesMissing(obs.missing)
    run = obs.run if config.mode == "execute" else None
    if not obs.changed_paths and run is None:
        return state, CompleteNoChanges()
    evidence = task_evidence(obs.evidence, run)
    last_check: CheckRecord | None
    match evidence:
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
    run_unmet = run is not None and not isinstance(run.verdict, Verified)
    if run is None and not failed and obs.requirements.read_back_verifies(
            obs.changed_paths, obs.deleted):
        return state, Complete(ReadBack(obs.changed_paths))
    if forcing:
        prompt = (run_prompt(run, obs.changed_paths, _uncounted_of(run.verdict))
                  if run is not None and run_unmet
                  else verification_prompt(evidence, obs.changed_paths, obs.requirements))
        return replace(state, forced_rounds=state.forced_rounds + 1), ForceVerification(prompt)
    requested = run.wanted if run is not None and run_unmet else ""
    return state, PauseVerificationFailed(last_check, stale, requested)
