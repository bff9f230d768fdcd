"""The one place a :class:`~mercury_nb.runs.request.RunRequest` becomes a planned run.

:func:`resolve` runs every check of a request once, in this order, and answers a
:class:`~mercury_nb.runs.planning.PlannedRun` or the first typed
:class:`~mercury_nb.runs.lookup.Refusal`:

1. a new task's text is not empty (``empty-task``);
2. an explicit ``max_steps`` lies in the config's ``MAX_STEPS_RANGE`` (``bad-max-steps``);
3. the settings: :func:`~mercury_nb.runs.settings.plan` (defaults < traitlets < environment
   < flags; a caller's ``config`` stands in for the lower layers), invalid ones
   ``bad-settings``;
4. the resolved workdir lies in the request's ``within`` folder when it names one
   (``outside-root``; a continue checks its task's workspace) and is a folder
   (``bad-workdir``): :func:`workdir_refusal`, here only, once;
5. a model object given by the caller replaces the configured chain (the one override,
   :func:`with_model`; a continue gets it on its checkpoint's settings);
6. the ledger (its home from the settings) and the plan: a new task
   (:func:`~mercury_nb.runs.planning.plan_task`) or a continue
   (:func:`~mercury_nb.runs.planning.plan_continue`, which resumes under the checkpoint's
   settings: :func:`~mercury_nb.runs.planning.resume_config`);
7. when asked, a new task whose model lacks its API key (``missing-key``, the banner a
   cell would show);
8. a task asking for the sandbox (``--sandbox workspace-write``, its checkpoint's settings for
   a continue) whose bubblewrap cannot run here (``no-sandbox``; probed once,
   :func:`sandbox_refusal`): it never starts unsandboxed;
9. last, a new task takes its workspace in one ledger transaction
   (:func:`~mercury_nb.runs.planning.occupy`: ``workspace-busy`` while another live task may
   change the same files; a continue does the same inside its claim).
"""

from __future__ import annotations

import sys
import uuid
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.config_limits import MAX_STEPS_RANGE, STEPS_RANGE_WORDS
from mercury_nb.ledger.texts import OUTSIDE_ROOT
from mercury_nb.runs.lookup import Refusal
from mercury_nb.runs.planning import (
    PlannedRun,
    inside,
    occupy,
    plan_continue,
    plan_task,
)
from mercury_nb.runs.request import RunRequest
from mercury_nb.runs.settings import flag_values, plan

if TYPE_CHECKING:
    from mercury_nb.transport.protocol import ChatModel

ResolvedRun = PlannedRun
"""A request that passed every check: its settings, ledger, and checkpoint when resumed."""


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def settings_problems(error: ValidationError) -> str:
    """Pydantic's errors as ``field: message; ...`` (how a cell words invalid settings)."""
    return "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'config'}: {err['msg']}"
                     for err in error.errors())


def resolve_settings(request: RunRequest) -> MercuryConfig | Refusal:
    """Steps 2-5 of :func:`resolve`: the request's settings, or why they are refused."""
    steps = request.flags.get("max_steps")  # a continue's too, on whatever it lays over
    lowest, highest = MAX_STEPS_RANGE
    if steps is not None and not lowest <= int(steps) <= highest:
        return Refusal(f"--max-steps must be {STEPS_RANGE_WORDS}", kind="bad-max-steps",
                       value=str(steps))
    flags = request.flags if request.flags_over_config else {}
    try:
        if request.config is not None:
            given = flag_values(flags)
            config = request.config.with_changes(**given) if given else request.config
        else:
            config = plan(flags, traitlets=request.traitlets, env=request.env,
                          check_workdir=False)
    except ValidationError as error:
        return Refusal(str(error), kind="bad-settings", value=settings_problems(error))
    refused = workdir_refusal(Path(config.workdir), None if request.resume else request.within)
    return refused if refused is not None else with_demo_rules(with_model(config, request.model))


def with_demo_rules(config: MercuryConfig) -> MercuryConfig:
    """A shipped demo's own commands allowed (``DemoModel.allow``), so it runs unasked."""
    from mercury_nb.transport.demo_models import demo_model

    demo = demo_model(config.model)
    if demo is None or not demo.allow or set(demo.allow) <= set(config.allow):
        return config
    return config.with_changes(allow=(*config.allow, *demo.allow))


def workdir_refusal(workdir: Path, within: Path | None) -> Refusal | None:
    """The one workdir check (flag, traitlets, environment, the panel's field): it lies in
    ``within`` when given (``outside-root``; first, so a path outside says nothing of what
    exists there), and it is a folder (``bad-workdir``). A name no folder can have (a NUL,
    a lone surrogate, too long, a link loop) is not a folder; None: go on."""
    try:
        if within is not None and not inside(workdir, within):
            return Refusal(OUTSIDE_ROOT.format(workspace=str(workdir)), kind="outside-root",
                           value=str(workdir))
        if workdir.is_dir():
            return None
    except (OSError, ValueError):
        pass
    return Refusal(f"workdir {str(workdir)!r} is not a directory", kind="bad-workdir",
                   value=str(workdir))


def with_model(config: MercuryConfig, model: ChatModel | None) -> MercuryConfig:
    """The one model override: a model object given by the caller replaces the chain (the
    agent's entry points take the config as it comes: their callers apply this)."""
    if model is not None and config.model_chain != (model.name,):
        return config.with_changes(model=model.name, fallbacks=())
    return config


def resolve(request: RunRequest) -> ResolvedRun | Refusal:
    """The request as a planned run, or the first check that refused it (see the module)."""
    if not request.resume and not request.task:
        return Refusal("the task is empty", kind="empty-task")
    config = resolve_settings(request)
    if isinstance(config, Refusal):
        return config
    planned: PlannedRun | Refusal
    if not request.recorded:
        planned = PlannedRun(request.task_id or uuid.uuid4().hex[:12], request.task,
                             config, handle=None)
    else:
        handle = request.handle
        if handle is None:
            from mercury_nb.runs.launch import ledger_for

            handle = ledger_for(config, request.report or _to_stderr,
                                prune=request.prune_ledger)
        if request.resume:
            planned = plan_continue(handle, request.task_id, config, request.flags,
                                    words=request.words, within=request.within,
                                    check=sandbox_refusal)
        else:
            planned = plan_task(handle, request.task, config, request.task_id)
    if isinstance(planned, Refusal):
        return planned
    if planned.resumed:  # under its checkpoint's settings: the override goes on those
        return replace(planned, config=with_model(planned.config, request.model))
    if request.refuse_missing_key:
        missing = _missing_key(planned.config)
        if missing is not None:
            return missing
    refused = sandbox_refusal(planned.config)
    if refused is not None:
        return refused
    return occupy(planned)


def sandbox_refusal(config: MercuryConfig) -> Refusal | None:
    """A ``no-sandbox`` refusal when ``config`` asks for the sandbox and bubblewrap cannot
    make one here (the probe runs once per process while it succeeds); None: go on."""
    if config.sandbox == "off":
        return None
    from mercury_nb.contract.sandbox_policy import unavailable_text
    from mercury_nb.tools.sandbox_probe import probe

    why = unavailable_text(probe(config.bwrap_path, config.sandbox_probe_timeout_s))
    return None if why is None else Refusal(why, kind="no-sandbox", value=config.bwrap_path)


def _missing_key(config: MercuryConfig) -> Refusal | None:
    """A ``missing-key`` refusal whose message is the setup-failure banner and whose value is
    the bare error, for a front end that words a start refused (None: keys found)."""
    from mercury_nb.transport.factory import SETUP_FAILED, missing_key_error

    error = missing_key_error(config)
    if error is None:
        return None
    from mercury_nb.contract.endings import Failed
    from mercury_nb.ui.banners import banner_text

    return Refusal(banner_text(Failed(SETUP_FAILED.format(error=error)), []), kind="missing-key",
                   value=error)
