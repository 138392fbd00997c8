"""Observer: the event model and transcript importers (plain Python, no Qt, no database).

Import entry points: ``import_any`` (sniffs the format), ``find_transcripts``
(where a project's transcripts live), and one importer per format.

Names are loaded on first use (PEP 562), so a hook that needs only ``tool_names``
does not import every transcript importer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.memory.lazy import lazy_getattr

if TYPE_CHECKING:
    from desktop.memory.observer.claude_code import import_claude_code, import_claude_stream_json
    from desktop.memory.observer.codex import import_codex_exec_json, import_codex_rollout
    from desktop.memory.observer.discover import TranscriptRef, find_transcripts
    from desktop.memory.observer.events import (
        AgentEvent,
        Reasoning,
        SessionEnd,
        SessionStart,
        StepComplete,
        ToolCall,
        ToolResult,
        UserMessage,
    )
    from desktop.memory.observer.gemini import import_gemini_chat
    from desktop.memory.observer.records import ImportResult, TranscriptImportError
    from desktop.memory.observer.sniff import detect_format, import_any
    from desktop.memory.observer.tool_names import canonical_tool, file_paths_of

_WHERE = {"import_claude_code": "claude_code", "import_claude_stream_json": "claude_code",
    "import_codex_exec_json": "codex", "import_codex_rollout": "codex", "TranscriptRef": "discover",
    "find_transcripts": "discover", "AgentEvent": "events", "Reasoning": "events", "SessionEnd": "events",
    "SessionStart": "events", "StepComplete": "events", "ToolCall": "events", "ToolResult": "events",
    "UserMessage": "events", "import_gemini_chat": "gemini", "ImportResult": "records",
    "TranscriptImportError": "records", "detect_format": "sniff", "import_any": "sniff",
    "canonical_tool": "tool_names", "file_paths_of": "tool_names"}

__all__ = [
    "AgentEvent", "ImportResult", "Reasoning", "SessionEnd", "SessionStart", "StepComplete",
    "ToolCall", "ToolResult", "TranscriptImportError", "TranscriptRef", "UserMessage",
    "canonical_tool", "detect_format", "file_paths_of", "find_transcripts", "import_any",
    "import_claude_code", "import_claude_stream_json", "import_codex_exec_json",
    "import_codex_rollout", "import_gemini_chat",
]

__getattr__ = lazy_getattr(__name__, _WHERE)
