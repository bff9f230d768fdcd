"""The CLI's ``permissions``: list the allow rules saved for a workspace, or revoke one."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.ledger.access import LedgerHandle

NONE_SAVED = "No allow rules are saved for {workspace}."
REVOKED = "revoked: {rule}"
NOT_SAVED = 'error: "{rule}" is not a rule saved for {workspace}'


def add_permissions_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "permissions",
        help='list the allow rules "Always allow" saved for the workspace, or revoke one')
    parser.add_argument("--revoke", metavar="RULE", help="forget this saved rule")
    parser.add_argument("--workdir", help="the workspace (default: current folder)")


def permissions_command(handle: LedgerHandle | None, config: MercuryConfig,
                        revoke: str | None) -> int:
    """Print the workspace's saved rules (one a line) or revoke one; the exit code."""
    from mercury_nb.runs.permissions import revoke_rule, saved_rules
    from mercury_nb.runs.planning import ledger_workspace

    if handle is None:
        print("error: the work ledger could not be opened, so no rules can be listed "
              "(see the message above)", file=sys.stderr)
        return 1
    workspace = ledger_workspace(config)
    if revoke is not None:
        if revoke_rule(handle, config, revoke):
            print(REVOKED.format(rule=revoke))
            return 0
        print(NOT_SAVED.format(rule=revoke, workspace=workspace), file=sys.stderr)
        return 2
    rules = saved_rules(handle, config)
    print("\n".join(rules) if rules else NONE_SAVED.format(workspace=workspace))
    return 0
