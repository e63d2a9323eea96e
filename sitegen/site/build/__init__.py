"""The build stage: what to render, worker processes that render sessions, and build_site running every stage."""
