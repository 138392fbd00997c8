"""The names of the formats Engram imports and exports, as every door offers them.

A command line lists them as choices when it is built; the readers and writers themselves
(``lifecycle.formats``, ``actions``) load the rule-file parsers, the managed-block writer,
``tempfile`` and ``hashlib``, which cost every ``engram list`` ~35 ms it never uses.
"""

from __future__ import annotations

from typing import Final

#: What ``engram import`` reads (``lifecycle.formats.import_path``).
IMPORT_FORMATS: Final = ("json", "jsonl", "markdown", "claude-md", "agents-md", "gemini-md", "claude-memory",
                         "cline", "cursor", "copilot")
#: What every door exports (``actions.export``).
EXPORT_FORMATS: Final = ("json", "markdown", "claude-md", "agents-md")
