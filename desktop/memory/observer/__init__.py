"""Observer: the event model and transcript importers (plain Python, no Qt, no database).

Import entry points: ``import_any`` (sniffs the format), ``find_transcripts``
(where a project's transcripts live), and one importer per format.
"""

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

__all__ = [
    "AgentEvent", "ImportResult", "Reasoning", "SessionEnd", "SessionStart", "StepComplete",
    "ToolCall", "ToolResult", "TranscriptImportError", "TranscriptRef", "UserMessage",
    "canonical_tool", "detect_format", "file_paths_of", "find_transcripts", "import_any",
    "import_claude_code", "import_claude_stream_json", "import_codex_exec_json",
    "import_codex_rollout", "import_gemini_chat",
]
