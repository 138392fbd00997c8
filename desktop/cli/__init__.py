"""The `engram` command line: a client of the same core as the GUI."""
