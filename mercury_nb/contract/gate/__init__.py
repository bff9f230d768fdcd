"""The verification gate: evidence by exit code and order, check commands, task intent."""
