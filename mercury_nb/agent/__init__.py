"""The agent loop: the one orchestrator that feeds the pure core and carries out its decisions."""
