"""Compatibility alias: the task outcome lives in :mod:`mercury_nb.contract.outcome`."""

from mercury_nb.contract.outcome import (
    CommandEvidence,
    FileChange,
    Status,
    TaskOutcome,
    Usage,
)

__all__ = [
    "CommandEvidence",
    "FileChange",
    "Status",
    "TaskOutcome",
    "Usage",
]
