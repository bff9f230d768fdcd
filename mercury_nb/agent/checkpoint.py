"""The resumable state of a task as JSON: conversation, counters, tool log and start snapshot."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from mercury_nb.agent.events import StepEnded
from mercury_nb.agent.session import TaskSession, ToolLogEntry
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.continuation import StepBudgetState, TruncationState
from mercury_nb.contract.turns.router_state import RouterState
from mercury_nb.workspace.snapshot import Snapshot


class CheckpointedLoop(Protocol):
    """What a checkpoint is taken from: the session, the router state and the start snapshot."""

    session: TaskSession
    state: RouterState | None
    snapshot: Snapshot

CHECKPOINT_VERSION = 1


def checkpoint_of(loop: CheckpointedLoop) -> dict[str, Any]:
    """Everything needed to resume ``loop``'s task later, as JSON-ready data (no secrets:
    the config is stored without its API key)."""
    # hashes and sizes, plus the "before" text of the files changed so far only
    return {**session_checkpoint(loop.session, loop.state),
            "snapshot": loop.snapshot.stored().to_json()}


def step_ended(loop: CheckpointedLoop, calls_before: int) -> StepEnded:
    """The event for the step that just finished (its tool calls are those of the tool log
    from ``calls_before`` on). Its checkpoint is data the loop no longer changes: fresh
    lists, and messages, which are never changed once in the conversation (compaction
    replaces them), so the ledger serializes only the newest of a batch, off the loop."""
    session, state = loop.session, loop.state
    changed = any(entry.mutating or entry.command is not None or entry.changed_paths
                  for entry in session.tool_log[calls_before:])

    def take(with_snapshot: bool) -> dict[str, Any]:
        data = session_checkpoint(session, state)
        if with_snapshot:
            data["snapshot"] = loop.snapshot.stored().to_json()
        return data

    return StepEnded(session.task_id, session.steps_total, changed, take)


def session_checkpoint(session: TaskSession, state: RouterState | None) -> dict[str, Any]:
    """The checkpoint without its start snapshot: the conversation, counters and tool log
    (what a resume in the same process needs; it keeps the snapshot it has)."""
    return {
        "version": CHECKPOINT_VERSION,
        "task_id": session.task_id,
        "task": session.task,
        "config": config_data(session),
        "messages": list(session.messages),
        "tool_log": logged_entries(session),
        "steps_total": session.steps_total,
        "seq": session.seq,
        "provider_index": session.provider_index,
        "output_caps": {str(k): v for k, v in (state.output_caps if state else ())},
        "models_used": list(session.models_used),
        "last_verdict": session.last_verdict,
        "grounded_paths": list(session.grounded_paths),
        "usage": {name: list(used) for name, used in session.usage.items()},
        "continuations": state.budget.continuations if state else 0,
        "truncation_rounds": state.truncation.rounds if state else 0,
    }


def config_data(session: TaskSession) -> dict[str, Any]:
    """The session's config as checkpoint data (no key), dumped once per config object: a
    checkpoint is taken at every step, and the config is frozen."""
    made = session.config_data
    if made is None or made[0] is not session.config:
        made = session.config_data = (
            session.config, session.config.model_dump(mode="json", exclude={"api_key"}))
    return made[1]


def logged_entries(session: TaskSession) -> list[dict[str, Any]]:
    """The tool log as checkpoint data: a shallow copy of each (frozen, flat) entry, made once
    per entry over the task (a copy of every entry at every step grew with the task)."""
    done, log = session.logged, session.tool_log
    if len(done) > len(log) or (done and done[-1]["seq"] != log[len(done) - 1].seq):
        done.clear()  # the log was replaced (a restore): start again
    done.extend(dict(vars(entry)) for entry in log[len(done):])
    return list(done)


def restore_session(data: dict[str, Any], config: MercuryConfig) -> TaskSession:
    """The session as it was at the checkpoint, under ``config`` (which carries the key)."""
    session = TaskSession.start(data["task"], config, data["task_id"])
    session.messages = list(data["messages"])
    session.tool_log = [
        ToolLogEntry(**{**e, "changed_paths": tuple(e.get("changed_paths", ())),
                        "read_paths": tuple(e.get("read_paths", ())),
                        "kernel_cells": tuple(e.get("kernel_cells", ())),
                        "kernel_numbers": tuple(e.get("kernel_numbers", ())),
                        "changed_cells": tuple(e.get("changed_cells", ()))})
        for e in data["tool_log"]
    ]
    session.steps_total = int(data["steps_total"])
    session.seq = int(data["seq"])
    session.provider_index = int(data["provider_index"])
    session.models_used = list(data["models_used"])
    session.last_verdict = data.get("last_verdict")
    session.grounded_paths = tuple(data.get("grounded_paths") or ())
    session.usage = restored_usage(data.get("usage"))
    return session


def restored_usage(stored: Any) -> dict[str, tuple[int, int]]:
    """A checkpoint's usage (model -> [prompt, completion]); {} for one from before usage
    was kept, or anything unreadable."""
    usage: dict[str, tuple[int, int]] = {}
    for name, used in (stored if isinstance(stored, dict) else {}).items():
        if isinstance(used, list | tuple) and len(used) == 2 \
                and all(isinstance(n, int) and n >= 0 for n in used):
            usage[str(name)] = (int(used[0]), int(used[1]))
    return usage


def restore_snapshot(data: Mapping[str, Any]) -> Snapshot:
    """The workspace snapshot taken when the task first started."""
    return Snapshot.from_json(data["snapshot"])


@dataclass(frozen=True)
class Restorable:
    """A checkpoint this version can restore, its start snapshot parsed: once, where a
    continue checks it, and the resume uses that one."""

    data: Mapping[str, Any]
    snapshot: Snapshot


def restorable(checkpoint: Mapping[str, Any] | None) -> Restorable | None:
    """``checkpoint`` if this version can restore it (its start snapshot included), else
    None: the task then starts again from its text rather than staying stuck."""
    if checkpoint is None or checkpoint.get("version") != CHECKPOINT_VERSION:
        return None
    try:
        return Restorable(checkpoint, restore_snapshot(checkpoint))
    except (KeyError, TypeError, ValueError):
        return None


def restore_router_state(data: dict[str, Any], task: str, config: MercuryConfig) -> RouterState:
    """A fresh router state carrying the checkpoint's continuation and truncation counters,
    its lowered output caps and the provider it was on."""
    state = RouterState.start(task, config)
    caps = tuple(sorted((int(k), int(v)) for k, v in dict(data.get("output_caps") or {}).items()))
    current = int(data.get("provider_index", 0)) % len(state.providers.chain)
    return replace(
        state,
        budget=StepBudgetState(continuations=int(data.get("continuations", 0))),
        truncation=TruncationState(rounds=int(data.get("truncation_rounds", 0))),
        output_caps=caps,
        providers=replace(state.providers, current=current),
    )

