"""The workspace: path confinement, atomic writes and change snapshots."""
