"""Recovery: stall watchdog, memory governor, compaction, continuation, sub-agent supervision."""
