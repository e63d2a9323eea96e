"""The static site: build, index pages, search, stats, manifest, serve and watch."""
