"""Fakes that ship in the package: a scripted model and a loopback OpenAI-protocol server."""
