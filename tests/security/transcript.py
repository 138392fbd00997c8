"""A Claude Code session file (JSONL) written the way Claude Code writes one, for the session-end hook."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any


class ClaudeTranscript:
    """One session's records: the user's prompts, the agent's text, its tool calls and their results."""

    def __init__(self, session_id: str, cwd: Path) -> None:
        self.session_id = session_id
        self.cwd = str(cwd)
        self.records: list[dict[str, Any]] = []
        self.t = 0

    def _add(self, rtype: str, message: dict[str, Any]) -> None:
        self.t += 1
        self.records.append({"type": rtype, "message": message, "sessionId": self.session_id, "cwd": self.cwd,
                             "uuid": str(uuid.uuid4()), "timestamp": f"2026-11-20T10:{self.t // 60:02d}:"
                                                                     f"{self.t % 60:02d}.000Z"})

    def user(self, text: str) -> ClaudeTranscript:
        """The user typed ``text``."""
        self._add("user", {"role": "user", "content": text})
        return self

    def say(self, text: str) -> ClaudeTranscript:
        """The agent wrote ``text`` (visible prose)."""
        self._add("assistant", {"id": f"msg_{self.t}", "role": "assistant",
                                "content": [{"type": "text", "text": text}]})
        return self

    def tool(self, name: str, args: dict[str, Any], output: str, *, error: bool = False) -> ClaudeTranscript:
        """The agent called ``name`` and got ``output``."""
        call_id = f"toolu_{self.t}"
        self._add("assistant", {"id": f"msg_{self.t}", "role": "assistant",
                                "content": [{"type": "tool_use", "id": call_id, "name": name, "input": args}]})
        self._add("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                                         "content": output, "is_error": error}]})
        return self

    def write(self, path: Path) -> Path:
        """Write the file and return its path."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        return path
