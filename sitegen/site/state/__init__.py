"""What a build knows and keeps: session records, the manifest, jobs and URLs, sources, the lock, checkpoints."""
