"""Model setup decisions: which transport serves a model name, and which API key it needs."""
