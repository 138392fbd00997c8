"""Claude Code session records, as Claude Code 2.1 writes them, for observer tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class Transcript:
    """Builds one Claude Code ``<session>.jsonl``: user prompts, Bash calls with results, queue ops."""

    def __init__(self, session: str, cwd: str = "/proj", *, t0: int = 0) -> None:
        self.session = session
        self.cwd = cwd
        self.t = t0
        self.n = 0
        self.records: list[dict[str, Any]] = []

    def _ts(self) -> str:
        self.t += 1
        return f"2026-01-05T12:{self.t // 60:02d}:{self.t % 60:02d}.000Z"

    def _base(self, rtype: str) -> dict[str, Any]:
        self.n += 1
        return {"type": rtype, "sessionId": self.session, "cwd": self.cwd, "uuid": f"{self.session}-u{self.n}",
                "timestamp": self._ts(), "version": "2.1.33", "gitBranch": "main", "isSidechain": False}

    def user(self, text: str) -> Transcript:
        self.records.append({**self._base("user"), "message": {"role": "user", "content": text}})
        return self

    def meta(self, text: str) -> Transcript:
        self.records.append({**self._base("user"), "isMeta": True,
                             "message": {"role": "user", "content": [{"type": "text", "text": text}]}})
        return self

    def say(self, text: str) -> Transcript:
        self.records.append({**self._base("assistant"), "message": {
            "id": f"msg-{self.n}", "role": "assistant", "content": [{"type": "text", "text": text}]}})
        return self

    def bash(self, command: str, output: str = "ok", *, error: bool = False, tool_id: str | None = None
             ) -> Transcript:
        tid = tool_id or f"toolu_{self.session[:8]}_{self.n:04d}xx"
        self.records.append({**self._base("assistant"), "message": {
            "id": f"msg-{self.n}", "role": "assistant",
            "content": [{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": command}}]}})
        self.records.append({**self._base("user"), "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": output, "is_error": error}]}})
        return self

    def queue(self, op: str, content: str | None = None) -> Transcript:
        rec: dict[str, Any] = {"type": "queue-operation", "operation": op, "timestamp": self._ts(),
                               "sessionId": self.session}
        if content is not None:
            rec["content"] = content
        self.records.append(rec)
        return self

    def continued_as(self, session: str) -> Transcript:
        """A resumed copy: the same records (uuids, times, tool ids) under a new session id."""
        copy = Transcript(session, self.cwd, t0=self.t)
        copy.n = self.n
        copy.records = [{**r, "sessionId": session} for r in self.records]
        return copy

    def write(self, folder: Path) -> Path:
        path = folder / f"{self.session}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        return path
