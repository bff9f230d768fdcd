"""A run's permission state: the front end's approver, and the rules saved for its workspace.

"Always allow" saves a rule in the ledger for the workspace; every later task there starts
with the saved rules (:func:`permissions_for`). ``python -m mercury_nb permissions`` lists
them (:func:`saved_rules`) and revokes one (:func:`revoke_rule`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.permissions import AskedIn
from mercury_nb.runs.planning import PlannedRun, ledger_workspace
from mercury_nb.tools.approval import Approver, Permissions

if TYPE_CHECKING:
    from mercury_nb.ledger.access import LedgerHandle


def permissions_for(planned: PlannedRun, approver: Approver | None,
                    asked_in: AskedIn | None = None) -> Permissions:
    """The permission state a run starts with: ``approver`` (None: nobody can be asked),
    which asks ``asked_in``, and the workspace's saved rules; "Always allow" saves to the
    ledger (unrecorded: the task only)."""
    asked_in = asked_in if approver is not None else None
    handle = planned.handle
    if handle is None:
        return Permissions(approver=approver, asked_in=asked_in)
    workspace = ledger_workspace(planned.config)
    ledger = handle.ledger
    return Permissions(approver=approver, asked_in=asked_in, rules=ledger.rules_for(workspace),
                       save_rule=lambda rule: ledger.save_rule(workspace, rule))


def saved_rules(handle: LedgerHandle, config: MercuryConfig) -> list[str]:
    """The rules saved for ``config``'s workspace, oldest first."""
    return handle.ledger.rules_for(ledger_workspace(config))


def revoke_rule(handle: LedgerHandle, config: MercuryConfig, rule: str) -> bool:
    """Forget ``rule`` for ``config``'s workspace; False: it was not saved there."""
    return handle.ledger.revoke_rule(ledger_workspace(config), rule)
