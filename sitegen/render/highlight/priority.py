"""pygments' lexer priorities, known without importing the lexers: ranking the lexers that claim a
file name (*.sql, *.h) would otherwise import each claimant's module, 20-30 ms on a small rebuild."""

from __future__ import annotations

__all__ = ["PRIORITIES", "PYGMENTS_VERSION"]

# The pygments release these were read from; with any other, lexers are imported to rank them.
# tests/test_markdown.py checks the table against the installed release's classes.
PYGMENTS_VERSION = "2.21.0"

# Lexer class name -> priority, for the lexers that have a file name pattern and a priority other
# than 0.
PRIORITIES: dict[str, float] = {
    "ArduinoLexer": 0.1,
    "CLexer": 0.1,
    "CharmciLexer": 0.1,
    "CppLexer": 0.1,
    "CudaLexer": 0.1,
    "ECLexer": 0.1,
    "FreeFemLexer": 0.1,
    "LogosLexer": 0.25,
    "MqlLexer": 0.1,
    "NasmLexer": 1.0,
    "NesCLexer": 0.1,
    "ObjectiveCLexer": 0.05,
    "ObjectiveCppLexer": 0.05,
    "OmgIdlLexer": 0.1,
    "PikeLexer": 0.1,
    "PromelaLexer": 0.1,
    "SwigLexer": 0.04,
    "TextLexer": 0.01,
    "TsxLexer": 0.5,
    "TypeScriptLexer": 0.5,
}
