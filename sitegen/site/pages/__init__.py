"""The site pages stage: home, projects, problems, stats with charts, and related sessions."""
