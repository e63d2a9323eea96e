"""Transcript to HTML: pages, entries, tool cards, markdown and highlighting; pure functions of a transcript."""
