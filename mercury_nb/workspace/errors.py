"""The workspace's own error type: a path or file operation it refuses, said in plain words."""

from __future__ import annotations


class WorkspaceError(Exception):
    """Raised for a refused path (escapes the workspace, empty, NUL byte, bad symlink); tools
    pass the message back to the model as a failed call."""
