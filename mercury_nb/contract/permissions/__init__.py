"""Permission modes, allow rules and the pure decision of whether an action may run."""

from mercury_nb.contract.permissions.approval import (
    APPROVAL_ANSWERS,
    ApprovalAnswer,
    ApprovalRequest,
    denied_text,
    pause_reason,
)
from mercury_nb.contract.permissions.decide import (
    ACTION_KINDS,
    DEFAULT_MODE,
    PERMISSION_MODES,
    Action,
    ActionKind,
    Allow,
    Ask,
    Decision,
    Deny,
    PermissionMode,
    action_for_tool,
    decide,
    describe_action,
    offers_mutating_tools,
)
from mercury_nb.contract.permissions.rules import (
    BUILT_IN_RULES,
    command_parts,
    exact_rule,
    matches_rules,
)

__all__ = [
    "ACTION_KINDS",
    "APPROVAL_ANSWERS",
    "BUILT_IN_RULES",
    "DEFAULT_MODE",
    "PERMISSION_MODES",
    "Action",
    "ActionKind",
    "Allow",
    "ApprovalAnswer",
    "ApprovalRequest",
    "Ask",
    "Decision",
    "Deny",
    "PermissionMode",
    "action_for_tool",
    "command_parts",
    "decide",
    "denied_text",
    "describe_action",
    "exact_rule",
    "matches_rules",
    "offers_mutating_tools",
    "pause_reason",
]
