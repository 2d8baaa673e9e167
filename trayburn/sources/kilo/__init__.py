"""Kilo Code 7 (the VS Code extension and the `kilo` CLI): its SQLite database as a source (docs/formats/kilo7.md)."""
