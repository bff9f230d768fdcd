"""Escalation: the narration guard, doom loops and provider retry/fallback policy."""
