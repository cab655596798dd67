"""One module per stack action. Each walks a live stack's graph through the scheduler and
runs resource actions through the runner; the service starts them under a claim."""
