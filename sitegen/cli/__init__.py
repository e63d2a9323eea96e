"""The command line: each command parses its options, calls one function of the core and reports."""

from sitegen.cli.app import app, main

__all__ = ["app", "main"]
