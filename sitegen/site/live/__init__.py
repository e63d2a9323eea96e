"""The live stage: `sitegen watch` serving the site and rebuilding it as the agents write."""
