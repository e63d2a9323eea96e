"""The build stage: the plan of what to render, the worker processes that render sessions, and build_site, which runs every stage."""
