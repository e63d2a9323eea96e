"""The search stage: one tokenising spec, the site's FTS5 index and its shards, and `sitegen search`'s own index."""
