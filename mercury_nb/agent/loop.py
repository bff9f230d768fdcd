"""The one orchestrator: runs turns, feeds the pure core, and carries out its decisions."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import assert_never

from mercury_nb.agent.checkpoint import checkpoint_of, step_ended
from mercury_nb.agent.escalation import grounding_message, step_observation
from mercury_nb.agent.events import EventSink, Notice, StepStarted, TurnEnded
from mercury_nb.agent.evidence import gather_turn_facts
from mercury_nb.agent.memory import MemoryGovernor
from mercury_nb.agent.prompts import assistant_message
from mercury_nb.agent.session import TaskSession
from mercury_nb.agent.snapshot_hooks import into_snapshot
from mercury_nb.agent.spending import SpendMeter
from mercury_nb.agent.stall_watch import AttemptStalled, StallWatch
from mercury_nb.agent.step import StepFailedBeforeOutput, watched_step
from mercury_nb.agent.tool_fit import ToolFit
from mercury_nb.agent.tool_runner import run_tool_calls
from mercury_nb.agent.turn_report import (
    CannotFit,
    NeedsPermission,
    OverBudget,
    Pressured,
    TurnReport,
    ended,
    looped,
    provider_failed,
    stalled_turn,
    verdict_of,
)
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import Ending, WindowTooSmall
from mercury_nb.contract.escalation.doom_loop import (
    DoomLoop,
    DoomState,
    observe_step,
    reset_for_new_turn,
)
from mercury_nb.contract.escalation.narration_guard import forced_step_failed
from mercury_nb.contract.recovery.context_budget import PauseForOverflow, SendShrunk
from mercury_nb.contract.turns.final_reply import FinishCall
from mercury_nb.contract.turns.router_state import (
    FinishWith,
    GuardRound,
    NextTurn,
    RetryStep,
    RouterState,
    TurnDirective,
)
from mercury_nb.contract.turns.stream_assembly import AssembledToolCall, StepReply
from mercury_nb.contract.turns.stream_ending import StreamEnding
from mercury_nb.contract.turns.turn_router import step_router
from mercury_nb.contract.turns.turn_verdict import TurnObservation, TurnVerdict, classify_turn_end
from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.registry import ToolRegistry
from mercury_nb.transport.protocol import ChatModel, ModelRequest
from mercury_nb.workspace.snapshot import Snapshot

TURN_ENDS = (TurnVerdict.TEXT_STOP, TurnVerdict.STEPS_EXHAUSTED)
"""Verdicts after which the next turn is a new one (the doom detector's in-turn runs reset)."""


@dataclass
class AgentLoop:
    """Runs one task's turns and carries out the pure core's decisions.

    What follows a turn (finish, next turn, guard round, retry or fallback) is decided by
    ``step_router``; the turn's verdict by ``classify_turn_end``, doom loops by
    ``observe_step``, stalls and memory pressure by their governors. The loop decides only
    the mechanics inside a turn: step while the last step made tool calls and the budget
    lasts, offer the directive's tools on a turn's first step only, keep partial text
    without its cut tool calls, end the turn after a ``finish`` call (its other calls run
    first) or an action nobody could allow, and never feed the doom detector a final answer."""

    session: TaskSession
    models: Sequence[ChatModel]
    registry: ToolRegistry
    ctx: ToolContext
    on_event: EventSink
    snapshot: Snapshot
    doom: DoomState = field(default_factory=DoomState)
    state: RouterState | None = None
    """The router's state: given to resume a task, then the state after each decision."""
    watch: StallWatch = field(init=False, repr=False)
    """The stall watchdog of every model request and tool step (see ``stall_watch``)."""
    memory: MemoryGovernor = field(init=False, repr=False)
    """Checked before every request: compaction in place, or a pressure pause."""
    fit: ToolFit = field(init=False, repr=False)
    """Checked before every request: the tool set the window holds, or the failure."""
    spender: SpendMeter = field(init=False, repr=False)
    """Checked before every request (and before a summary's): the budgets, or the pause."""

    def __post_init__(self) -> None:
        self.watch = StallWatch(self.config, self.on_event)
        self.memory = MemoryGovernor(self.config)
        self.fit = ToolFit(self.config, self.memory.learned)
        self.spender = SpendMeter(self.config)
        self.ctx = replace(into_snapshot(self), **self.watch.tool_callbacks())  # this task's

    @property
    def config(self) -> MercuryConfig:
        return self.session.config

    @property
    def model(self) -> ChatModel:
        return self.models[self.session.provider_index % len(self.models)]

    async def run(self) -> Ending:
        state = self.state = self.state or RouterState.start(self.session.task, self.config)
        # a restored task resumes on the provider its checkpoint names (the router's copy)
        directive = TurnDirective(provider_index=state.providers.current)
        while True:
            calls_before = len(self.session.tool_log)
            report = await self._run_turn(directive)
            verdict = verdict_of(report)  # None: paused or failed before a request
            if verdict is not None:  # else the last turn that ran keeps the task's verdict
                self.session.last_verdict = verdict.value
            facts = await gather_turn_facts(
                self, report, forced=directive.tool_choice == "required",
                called_tools=len(self.session.tool_log) > calls_before)
            state, decision = step_router(state, facts, self.config)
            self.state = state
            if verdict in TURN_ENDS:
                self.doom = reset_for_new_turn(self.doom)
            self.on_event(TurnEnded(self.session.task_id, verdict.value if verdict else None,
                                    decision.kind, lambda: checkpoint_of(self)))
            match decision:
                case FinishWith(ending=ending):
                    return ending
                case NextTurn(directive=directive, notice=notice, fresh_budget=fresh):
                    self._begin(Notice(notice, decision.notice_kind) if notice else None,
                                fresh, directive)
                case GuardRound(directive=directive, grounding=grounding, notice=notice,
                                fresh_budget=fresh):
                    if grounding:
                        root = self.ctx.root.root
                        message = await grounding_message(root, self.config.grounding_entries)
                        self.session.messages.append(message)
                    self._begin(Notice(notice, decision.notice_kind) if notice else None,
                                fresh, directive)
                case RetryStep(directive=directive, notice=notice, delay_s=delay):
                    self._begin(Notice(notice, decision.notice_kind) if notice else None,
                                False, directive)
                    if delay > 0:
                        await asyncio.sleep(delay)
                case _ as unreachable:
                    assert_never(unreachable)

    def _begin(self, notice: Notice | None, fresh_budget: bool, directive: TurnDirective) -> None:
        if notice is not None:
            self.on_event(notice)
        if fresh_budget:
            self.session.steps_in_budget = 0
        self.session.messages.extend(directive.messages)

    def _output_cap(self) -> int:
        """``max_tokens`` for the serving provider: the router state's lowered cap (the one
        copy, checkpointed and restored with it), else the configured one."""
        default = self.config.max_output_tokens
        if self.state is None:
            return default
        return self.state.output_cap(self.session.provider_index, default)

    def _offered_tools(self, names: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """The directive's tools that this registry has (None: every tool)."""
        if names is None:
            return None
        return tuple(name for name in names if name in self.registry)

    async def _run_turn(self, directive: TurnDirective) -> TurnReport:
        """Steps until the turn ends; the first step follows the directive's tool choice.
        Every step feeds the doom-loop detector; a loop ends the attempt (kept work stays)."""
        first = True
        did_work = False
        self.session.provider_index = directive.provider_index
        while True:
            tool_names = self._offered_tools(directive.tool_names) if first else None
            cap = self._output_cap()
            cap = await self.memory.output_cap(self, cap)  # never more than the window allows
            tools = await self.fit.offer(self.model, self.session, self.registry, tool_names,
                                         cap, self.on_event)
            if isinstance(tools, WindowTooSmall):  # no request can be sent in this window
                return CannotFit(tools)
            if (hit := await self.spender.check(self.session, self.on_event)) is not None:
                return OverBudget(hit)  # spent: paused before the request (or a summary's)
            pressure = await self.memory.relieve(self, tools, cap)
            if pressure is not None:
                return await self._paused(pressure.why, pressure.reason == "context", cap)
            if (hit := await self.spender.check(self.session, self.on_event)) is not None:
                return OverBudget(hit)  # a summary's tokens count too
            request = ModelRequest(
                messages=tuple(self.session.messages), tools=tools,
                tool_choice=directive.tool_choice if first else "auto", max_tokens=cap,
            )
            was_first, first = first, False
            self.session.steps_total += 1
            self.session.steps_in_budget += 1
            model = self.model
            if model.name not in self.session.models_used:
                self.session.models_used.append(model.name)
            spent, self.watch.context = self.spender.spend, self.memory.context
            self.on_event(StepStarted(self.session.steps_total, self.config.max_steps, model.name,
                                      spent.tokens, spent.usd, spent.unpriced, self.memory.context))
            try:
                reply = await watched_step(model, request, self.on_event,
                                           self.session.steps_total, self.watch,
                                           on_usage=self.session.add_usage)
            except StepFailedBeforeOutput as failure:
                # no model answered: not a step (a task no model ever answered reports 0)
                self.session.steps_total -= 1
                self.session.steps_in_budget -= 1
                match await self.memory.absorb_overflow(self, failure.error, request):
                    case SendShrunk():  # the conversation was shrunk: the same step again
                        first = was_first
                        continue
                    case PauseForOverflow(why=why):
                        next_cap = await self.memory.output_cap(self, self._output_cap())
                        if await self.fit.changes_set(self.model, self.session, self.registry,
                                                      next_cap):  # the learned window's tools
                            first = was_first
                            continue
                        return await self._paused(why, True, request.max_tokens)
                    case None:  # not an overflow: a provider failure
                        return provider_failed(failure.error, self.session.secrets, request,
                                               tool_names, did_work)
                    case _ as unreachable:
                        assert_never(unreachable)
            except AttemptStalled as stalled:
                return stalled_turn(self.session, stalled, model.name, request, tool_names,
                                    did_work)
            self.memory.step_went_through()
            self.spender.step_done(self.session, model.name, self.on_event)
            results: list[tuple[AssembledToolCall, ToolResult]] = []
            calls_before = len(self.session.tool_log)
            finish: FinishCall | None = None
            if reply.ending is StreamEnding.COMPLETE:
                self.session.messages.append(assistant_message(reply))
                if reply.tool_calls:
                    async with self.watch.tools():
                        results = await run_tool_calls(reply.tool_calls, self.session,
                                                       self.registry, self.ctx,
                                                       self.watch.tool_sink(self.on_event))
                    did_work = True
                    finish = finish_call(results)
            elif reply.ending is StreamEnding.TRUNCATED and reply.text:
                # the output limit cut it: the text stays as context for the resume round
                self.session.messages.append(assistant_message(reply, with_tool_calls=False))
            # an interrupted reply is dropped whole: its text is never context nor an answer
            self.on_event(step_ended(self, calls_before))  # whole: each call has its result
            if self.session.permission_needed is not None:  # nobody could allow an action
                return NeedsPermission(self.session.permission_needed)
            verdict = classify_turn_end(
                TurnObservation(
                    steps_used=self.session.steps_in_budget,
                    max_steps=self.config.max_steps,
                    last_step_had_tool_calls=bool(reply.tool_calls),
                    stream=reply.ending,
                    finished=finish is not None,
                )
            )
            self.doom, loop = observe_step(self.doom, step_observation(reply, results), self.config)
            # a complete final answer goes to the guard and the gate, never to the detector
            final_answer = reply.ending is StreamEnding.COMPLETE and (
                not reply.tool_calls or finish is not None)
            if isinstance(loop, DoomLoop) and not final_answer:
                return looped(loop, reply, model.name, self.session.secrets)
            step_calls = self.session.tool_log[calls_before:]
            if forced_step_failed(directive.must_mutate, was_first, len(results),
                                  sum(1 for e in step_calls if e.mutating)):
                # the round failed (its calls' results stay); a finish among them still counts
                return ended(TurnVerdict.TEXT_STOP, reply, model.name, cap, did_work, finish,
                             self.session.secrets)
            if finish is None and _keeps_going(reply, self.session.steps_in_budget,
                                               self.config.max_steps):
                continue
            return ended(verdict, reply, model.name, cap, did_work, finish, self.session.secrets)

    async def _paused(self, why: str, context: bool, cap: int) -> TurnReport:
        """The pressure pause (for the context only while a resume can succeed: else fail)."""
        if context:
            unfit = await self.fit.unfit_prefix(self.model, self.session, self.registry, cap)
            if unfit is not None:
                return CannotFit(unfit)
        return Pressured(why)


def _keeps_going(reply: StepReply, steps_used: int, max_steps: int) -> bool:
    complete = reply.ending is StreamEnding.COMPLETE
    return complete and bool(reply.tool_calls) and steps_used < max_steps


def finish_call(results: Sequence[tuple[AssembledToolCall, ToolResult]]) -> FinishCall | None:
    """The step's last successful ``finish`` call: the model ended the turn (the step's
    other calls have run). A finish call the registry refused ends nothing."""
    calls = [result.finish for _, result in results if result.ok and result.finish is not None]
    return calls[-1] if calls else None
