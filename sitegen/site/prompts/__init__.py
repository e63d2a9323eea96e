"""The prompts stage: every prompt the user typed, linked to its session, as a page and its data."""
