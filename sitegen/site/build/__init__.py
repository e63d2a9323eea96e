"""The build stage: which sessions, the plan, worker processes, the manifest, the lock and checkpoints."""
