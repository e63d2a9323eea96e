"""Markdown to safe HTML: markdown-it-py, with a one-pass reader for the markdown most messages are made of."""
