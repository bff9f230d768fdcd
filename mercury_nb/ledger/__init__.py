"""The work ledger: a crash-safe SQLite record of every task, its events and its checkpoint."""
