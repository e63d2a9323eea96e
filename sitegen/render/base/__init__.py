"""The renderers' foundation: escaping and folding text, and the content cache of rendered fragments."""
