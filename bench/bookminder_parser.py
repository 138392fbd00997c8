"""Evaluation tooling: parse BookMinder terminal copies into Engram observer events.

The BookMinder diary (../shared/data/transcripts/bookminder/day-NNN.md) is text
copied from a terminal, not a machine transcript. Claude Code days show
``> prompt``, ``⏺ Tool(args)…`` with results under ``⎿`` (errors as
``⎿  Error: ...``), ``⏺ prose`` and ``✻ Thinking…``; Gemini CLI days (mostly
11-16) show ``✦ prose`` and boxed tool lines such as ``│ ✔  ReadFile path``; later
Gemini builds box the user's prompt (``│  > text │``).
A new session starts at a welcome banner. There are no ids or clocks: sessions
are numbered per day and time is synthesised (day date + line number) so the
replay order is right. Lossy by nature; good enough to replay behaviour.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.common import SHARED
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
from desktop.memory.observer.tool_names import (
    BASH,
    classify_shell,
    file_paths_of,
    is_local_command,
    normalize_args,
)

CWD = "/Users/palimondo/Developer/BookMinder"
BASE_DATE = datetime(2025, 5, 1, tzinfo=UTC)
CLAUDE_TOOLS = {"Read": "Read", "Update": "Edit", "Edit": "Edit", "MultiEdit": "MultiEdit", "Write": "Write",
                "Create": "Write", "Bash": "Bash", "Search": "Grep", "Grep": "Grep", "List": "Glob", "LS": "Glob",
                "Glob": "Glob", "Task": "Task", "Fetch": "WebFetch", "WebFetch": "WebFetch",
                "WebSearch": "WebSearch", "Call": "Other"}
GEMINI_TOOLS = {"ReadFile": "Read", "ReadManyFiles": "Read", "Edit": "Edit", "WriteFile": "Write", "Shell": "Bash",
                "FindFiles": "Glob", "SearchText": "Grep", "ReadFolder": "Glob", "GoogleSearch": "WebSearch",
                "WebFetch": "WebFetch", "write_file": "Write", "write": "Write", "replace": "Edit",
                "read_file": "Read", "run_shell_command": "Bash"}
_CLAUDE_CALL = re.compile(r"^⏺ ([A-Z]\w*)\((.*?)\)?…?\s*$")
_GEMINI_CALL = re.compile(r"^\s*│\s+([✔x✖-])\s+(\w+)\s+(.*?)\s*│?\s*$")
_BANNER = ("Welcome to Claude Code", "Tips for getting started")
_GEMINI_ERROR = re.compile(r"Traceback|Error:|command not found|FAILED|Exit Code: [1-9]|No such file", re.I)
# Gemini CLI 0.1.9+ draws the user's prompt in a box: "│  > text  │", continued on "│    text  │" lines.
_GEMINI_PROMPT = re.compile(r"^│  > (.*?)\s*│?\s*$")
_KV_PATH = re.compile(r'(?:file_path|path|notebook_path)\s*:\s*"?([^",)]+)"?')
_PATTERN = re.compile(r'pattern\s*:\s*"((?:[^"\\]|\\.)*)"')
# Early Claude Code builds printed the turn's cost at the right edge of the tool line.
_COST_SUFFIX = re.compile(r"\s{2,}Cost: \$[\d.]+ \([\d.]+s\)\s*$")
# After /compact, Claude Code clears the screen and reprints a banner: same session.
_COMPACTED = ("Compacted. ctrl+r", "Previous Conversation Compacted")
_COMPACT_WINDOW = 40
# Files Claude Code loads into context without a tool call: "@path" in a prompt or a
# custom command, and the files it re-reads after /compact. Shown as "⎿  Read path (N lines)".
_ATTACHED_READ = re.compile(r"^\s*⎿\s+Read (\S+) \(\d+ lines\)\s*$")


@dataclass
class ParsedSession:
    """One session of a day, as events plus what the benchmark needs to know."""

    session_id: str
    agent: str
    day: int
    events: list[AgentEvent] = field(default_factory=list)
    attachments: list[tuple[str, list[str]]] = field(default_factory=list)
    """(prompt, files Claude Code attached with it): a slash command's or @-mention's expansion as shown."""


class _Builder:
    def __init__(self, day: int, index: int, agent: str, line_no: int) -> None:
        self.sid = f"bookminder-d{day:03d}-s{index}"
        self.day, self.agent = day, agent
        self.base = (BASE_DATE + timedelta(days=day)).timestamp()
        self.events: list[AgentEvent] = []
        self.step = 0
        self.calls = 0
        self.attachments: list[tuple[str, list[str]]] = []
        self.events.append(SessionStart(self.sid, agent, CWD, None, "interactive", self.ts(line_no)))

    def ts(self, line_no: int) -> float:
        return self.base + line_no

    def user(self, text: str, line_no: int) -> None:
        self.events.append(UserMessage(self.sid, self.step, text, self.ts(line_no)))

    def attached_read(self, path: str, line_no: int) -> None:
        """A file Claude Code put in context by itself (an @-mention or a post-compaction re-read)."""
        cid = self.call("Read", "Read", {"file_path": path}, line_no)
        self.result(cid, "Read", "", False, line_no)

    def prompt(self, text: str, line_no: int, attached: list[str] | None = None) -> None:
        """A user prompt, unless it is a built-in command that never reaches the model."""
        if not is_local_command(text):
            self.user(text, line_no)
            self.attachments.append((text, list(attached or [])))

    def reasoning(self, text: str, kind: str, line_no: int) -> None:
        self.step += 1
        self.events.append(Reasoning(self.sid, self.step, text, self.ts(line_no), kind))
        self.events.append(StepComplete(self.sid, self.step, self.ts(line_no)))

    def call(self, tool: str, raw: str, args: dict[str, object], line_no: int) -> str:
        self.step += 1
        self.calls += 1
        cid = f"c{self.calls}"
        if tool == BASH:
            tool, norm = classify_shell(args)
        else:
            norm = normalize_args(tool, args)
        paths = tuple(p for p in file_paths_of(tool, norm, CWD) if not p.startswith(("/", "..")))
        self.events.append(ToolCall(self.sid, self.step, cid, tool, raw, norm, paths, self.ts(line_no)))
        return cid

    def result(self, cid: str, tool: str, output: str, is_error: bool, line_no: int) -> None:
        if tool in ("Edit", "MultiEdit") and not is_error:
            changed = _terminal_edit(output)
            if changed:  # the terminal shows the diff, not the arguments: recover the first changed line
                for k in range(len(self.events) - 1, -1, -1):
                    ev = self.events[k]
                    if isinstance(ev, ToolCall) and ev.call_id == cid:
                        self.events[k] = replace(ev, args={**ev.args, "old_string": changed[0],
                                                           "new_string": changed[1]})
                        break
        if is_error and "EISDIR" in output[:200]:
            # A "read" of a directory touched no file: drop its path from the call.
            for k in range(len(self.events) - 1, -1, -1):
                ev = self.events[k]
                if isinstance(ev, ToolCall) and ev.call_id == cid:
                    self.events[k] = replace(ev, file_paths=())
                    break
        self.events.append(ToolResult(self.sid, self.step, cid, tool, output[:20000], is_error, None,
                                      self.ts(line_no)))
        self.events.append(StepComplete(self.sid, self.step, self.ts(line_no)))

    def finish(self, line_no: int) -> ParsedSession:
        self.events.append(SessionEnd(self.sid, "unknown", self.ts(line_no)))
        return ParsedSession(self.sid, self.agent, self.day, self.events, self.attachments)


_DIFF_LINE = re.compile(r"^\s*(\d+)\s{1,4}(?:[-+]\s+)?(\S.*)$")


def _terminal_edit(output: str) -> tuple[str, str] | None:
    """(old, new) of the first changed line in Claude Code's rendered diff ("Updated x with ...").

    The copy lost the -/+ markers; a removed line and its replacement show the same line
    number one after the other.
    """
    prev: tuple[str, str] | None = None
    for line in output.splitlines()[:200]:
        m = _DIFF_LINE.match(line)
        if not m:
            prev = None
            continue
        if prev is not None and prev[0] == m.group(1) and prev[1].strip() != m.group(2).strip():
            return prev[1].strip(), m.group(2).strip()
        prev = (m.group(1), m.group(2))
    return None


def _claude_args(tool: str, inner: str) -> dict[str, object]:
    inner = inner.strip().rstrip("…").rstrip(")")
    if tool in ("Read", "Edit", "MultiEdit", "Write"):
        m = _KV_PATH.search(inner)
        return {"file_path": (m.group(1) if m else inner.split(",")[0]).strip().strip('"')}
    if tool in ("Grep", "Glob"):
        m = _PATTERN.search(inner)
        p = _KV_PATH.search(inner)
        args: dict[str, object] = {"pattern": m.group(1) if m else inner.strip('"')}
        if p:
            args["path"] = p.group(1)
        return args
    if tool == "Bash":
        return {"command": inner}
    if tool == "WebFetch":
        return {"url": inner}
    return {"description": inner}


def _gemini_args(tool: str, rest: str) -> dict[str, object]:
    if tool in ("Read", "Edit", "Write"):
        ticks = re.findall(r"`([^`]+)`", rest)
        if tool == "Read" and (ticks or rest.startswith("Will attempt")):
            # ReadManyFiles: only complete, literal file patterns (no folders, globs or cut-off paths).
            files = [t for t in ticks if not t.endswith(("/", "…")) and "*" not in t]
            return {"file_path": files[0], "paths": files} if files else {}
        rest = re.sub(r"^(Writing to |No file changes to )", "", rest)
        return {"file_path": rest.split(":")[0].split(" ")[0]}
    if tool == "Bash":
        return {"command": re.sub(r"\s*\([^()]*\)\s*$", "", rest)}
    if tool in ("Grep", "Glob"):
        return {"pattern": rest.split(" within ")[0].strip("'\"")}
    return {"query": rest}


def parse_day(path: Path) -> list[ParsedSession]:
    """All sessions of one day file, in order."""
    day = int(re.search(r"(\d+)", path.stem).group(1))  # type: ignore[union-attr]
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    sessions: list[ParsedSession] = []
    gemini_day = any(ln.startswith("✦") for ln in lines)
    cur = _Builder(day, 1, "gemini-cli" if gemini_day else "claude-code", 0)
    i, n = 0, len(lines)
    # An answer's code fence at the margin (the terminal did not indent it) may quote "> " lines:
    # they are the answer's, not prompts. A new message closes a fence left open.
    fenced = False
    while i < n:
        line = _COST_SUFFIX.sub("", lines[i])
        if line.startswith("```") or (fenced and not line.startswith(("⏺", "✦", "╭"))):
            fenced = fenced != line.startswith("```")
            i += 1
            continue
        fenced = False
        if (any(b in line for b in _BANNER) and len(cur.events) > 1
                and not any(c in ln for ln in lines[max(0, i - _COMPACT_WINDOW):i] for c in _COMPACTED)):
            sessions.append(cur.finish(i))
            cur = _Builder(day, len(sessions) + 1, "gemini-cli" if "Tips" in line else "claude-code", i)
        if line.startswith("> ") and not line.startswith("> ⏺"):
            text, attached = [line[2:]], []
            while i + 1 < n and lines[i + 1].startswith("  ") and lines[i + 1].strip():
                i += 1
                if a := _ATTACHED_READ.match(lines[i]):
                    attached.append(a.group(1))
                else:
                    text.append(lines[i].strip())
            cur.prompt(" ".join(text), i, attached)
            for path in attached:
                cur.attached_read(path, i)
        elif a := _ATTACHED_READ.match(line):
            cur.attached_read(a.group(1), i)
        elif g_prompt := _GEMINI_PROMPT.match(line):
            text = [g_prompt.group(1)]
            while i + 1 < n and lines[i + 1].startswith("│    "):
                i += 1
                text.append(lines[i].strip().strip("│").strip())
            cur.prompt(" ".join(t for t in text if t), i)
        elif line.startswith("✻ Thinking"):
            body = []
            while i + 1 < n and (lines[i + 1].startswith("  ") or not lines[i + 1].strip()):
                i += 1
                body.append(lines[i].strip())
                if len(body) > 200:
                    break
            cur.reasoning(" ".join(b for b in body if b), "thinking", i)
        elif (m := _CLAUDE_CALL.match(line)) and m.group(1) in CLAUDE_TOOLS:
            tool = CLAUDE_TOOLS[m.group(1)]
            cid = cur.call(tool, m.group(1), _claude_args(tool, m.group(2)), i)
            out, err = [], False
            while (i + 1 < n and not lines[i + 1].startswith(("⏺", "> ", "✻", "╭"))
                   and not _ATTACHED_READ.match(lines[i + 1])):
                i += 1
                s = lines[i].strip()
                if s.startswith("⎿"):
                    s = s.lstrip("⎿ ").strip()
                    err = err or s.startswith("Error")
                if s:
                    out.append(s)
                if len(out) > 400:
                    break
            cur.result(cid, tool, "\n".join(out), err, i)
        elif line.startswith("⏺ ") or line.startswith("✦ "):
            text = [line[2:]]
            while i + 1 < n and lines[i + 1].startswith("  ") and lines[i + 1].strip():
                i += 1
                text.append(lines[i].strip())
            cur.reasoning(" ".join(text), "text", i)
        elif (g := _GEMINI_CALL.match(line)) and g.group(2) in GEMINI_TOOLS and g.group(1) != "-":
            tool = GEMINI_TOOLS[g.group(2)]
            cid = cur.call(tool, g.group(2), _gemini_args(tool, g.group(3)), i)
            out = []
            while i + 1 < n and not _GEMINI_CALL.match(lines[i + 1]) and "╰" not in lines[i + 1]:
                i += 1
                s = lines[i].strip().strip("│").strip()
                if s:
                    out.append(s)
                if len(out) > 400:
                    break
            text = "\n".join(out)
            cur.result(cid, tool, text, g.group(1) in "x✖" or (tool == "Bash" and bool(_GEMINI_ERROR.search(text))), i)
        i += 1
    if len(cur.events) > 1:
        sessions.append(cur.finish(n))
    return _drop_rerenders([s for s in sessions if any(isinstance(e, ToolCall) for e in s.events)])


def _opening(s: ParsedSession, calls: int = 5) -> tuple[str, tuple[tuple[str, tuple[str, ...], str], ...]]:
    prompt = next((e.text for e in s.events if isinstance(e, UserMessage) and e.text.strip()), "")
    first = tuple((e.tool, e.file_paths, str(e.args.get("command") or e.args.get("pattern") or ""))
                  for e in s.events if isinstance(e, ToolCall))[:calls]
    return prompt.strip(), first


def _drop_rerenders(sessions: list[ParsedSession]) -> list[ParsedSession]:
    """Claude Code reprints the whole conversation (banner included) when the terminal
    is resized; a copy then holds the same session twice. A "session" that opens with
    the same prompt and the same first tool calls as an earlier one of the same day is
    such a rendering: keep the longer of the two, in the first one's place."""
    out: list[ParsedSession] = []
    for s in sessions:
        opening = _opening(s)
        twin = next((k for k, o in enumerate(out) if o.agent == s.agent and _opening(o) == opening), None)
        if twin is None:
            out.append(s)
        elif len(s.events) >= len(out[twin].events):
            out[twin] = s
    return out


def folder_from_args() -> Path | None:
    """The BookMinder folder (``--data``, default beside the project), or None when it is absent."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=SHARED / "transcripts" / "bookminder")
    folder: Path = ap.parse_args().data
    if not folder.is_dir():
        print(f"BookMinder transcripts not found at {folder}; skipped.")
        return None
    return folder


def parse_all(folder: Path) -> list[ParsedSession]:
    """Every session of every day, in time order."""
    out: list[ParsedSession] = []
    for path in sorted(folder.glob("day-*.md")):
        out.extend(parse_day(path))
    return out
