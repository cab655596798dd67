"""What runs actions: the Engine (one per process), stack claims and row locks, the
scheduler, the runner of one resource action, and lifecycle hooks."""
