"""The pure decision core: no I/O, no asyncio, no clock; state in, decision out.

One verb pattern names the decisions, so a reader finds them by shape:

* ``step_<machine>(state, observation, config) -> (state, decision)`` advances a state
  machine: ``step_router`` (turns), ``step_gate`` (gate), ``step_guard``, ``step_provider``
  (escalation), ``step_watchdog``, ``step_governor``, ``step_overflow``,
  ``step_overflow_shrunk``, ``step_supervisor`` (recovery);
* ``classify_<thing>(observation) -> kind`` names what happened, with no state
  (``classify_stream``, ``classify_turn_end``, ``classify_intent``, ``classify_failure``,
  ``classify_final_reply``);
* ``route_<case>`` are the router's own sub-routes, and ``decide_start`` / ``judge_evidence``
  / ``route_model`` one-shot judgements.

Each edge module that feeds a machine with real time or I/O pairs with it by name:
``recovery/stall_watchdog`` ↔ ``agent/stall_watch``, ``recovery/memory_governor`` ↔
``agent/memory``, ``turns/turn_router`` ↔ ``agent/loop``.
"""
