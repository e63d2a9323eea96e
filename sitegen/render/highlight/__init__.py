"""Syntax highlighting: pygments on the server, its lexers translated into tables for the page's highlighter."""
