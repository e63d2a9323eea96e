"""The pi-family session format: load, migrate, blobs, tree, context, write, discover, artifacts."""
