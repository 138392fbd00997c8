"""What the user said, in their own words: one extraction for every agent's transcript format.

A user-role record is not always the user speaking. The harness writes user-role
text of its own (a slash command's expanded prompt, a skill's preamble, a
continuation summary, task notifications, system reminders, a hook's refusal);
people paste tool output, stack traces, review comments and plans into their
messages. Only what remains is a source of rules and facts.

Every importer (Claude Code, Codex, Gemini CLI) calls :func:`user_utterance` on
each user-role text with where it came from (:data:`ORIGINS`): a typed prompt, a
message queued while the agent worked, a memory note (``#`` in Claude Code,
``/memory add`` in Gemini CLI), or a correction typed when declining a tool call
(:func:`rejection_feedback`). The harness's own wording is a registry, one line
per message, like the harness errors in ``harness.py``: these strings are the
tools' protocol, never a user's phrasing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from desktop.memory.observer.cues import LANGUAGES, detect_language, find, normalise
from desktop.memory.observer.tool_names import is_local_command
from desktop.memory.text.lazy_re import lazy

PROMPT, QUEUED, MEMORY_NOTE, CORRECTION = "prompt", "queued", "memory_note", "correction"
ORIGINS: Final = (PROMPT, QUEUED, MEMORY_NOTE, CORRECTION)
#: A harness's expansion of a command the user typed: never the user's words.
EXPANSION: Final = "expansion"

#: How each harness opens user-role text it wrote itself (matched at the start, case-insensitive).
HARNESS_OPENERS: Final[dict[str, tuple[str, ...]]] = {
    "claude-code": (
        "<", "Caveat: The messages below", "This session is being continued", "[Request interrupted",
        "Base directory for this skill", "Implement the following plan", "Stop hook feedback",
        "Operation stopped by hook", "Read the output file to retrieve the result",
        "Please analyze this codebase and create a CLAUDE.md", "The user wants to clarify these questions",
        "User has answered your questions", "Your task is to create a detailed summary",
        "Invoke the superpowers:", "**ACTION REQUIRED", "Continue from where you left off",
        "Unknown slash command", "API Error",
    ),
    "codex": (
        "<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions",
        "Generate a file named AGENTS.md", "Please review the code changes", "<turn_aborted>",
    ),
    "gemini-cli": (
        "You are an AI agent that brings the power of Gemini", "Your task is to analyze the current directory",
        "--- Content from referenced files ---",
    ),
}
_HARNESS_RE: Final = lazy("|".join(re.escape(o) for os_ in HARNESS_OPENERS.values() for o in os_), re.I)
#: "<hook> hook error", "PreToolUse:Bash hook error": a hook's failure pasted or echoed.
_HOOK_ECHO: Final = lazy(r"^\s*(?:\w+(?::\w+)? hook (?:error|feedback|blocking)|PreToolUse|PostToolUse|"
                         r"UserPromptSubmit|SessionStart)\b", re.I)
#: What Claude Code writes when the user declines a tool call and says why.
_REJECTED_SAID: Final = lazy(r"the user said:\s*\n(?P<said>.+)", re.S)
#: The result the harness gives a call the user declined, with or without words, in each
#: CLI's words (Claude Code's, Codex's, Gemini CLI's, Engram's own agent's).
_DECLINED: Final = lazy(r"user doesn't want to proceed with this tool use|tool use was rejected|"
                        r"exec command rejected by user|User did not allow tool call|"
                        r"user did not allow this \w+ call", re.I)
#: Claude Code's ``#`` shortcut and Gemini CLI's ``/memory add``: the user asks for a note to be kept.
_MEMORY_NOTE: Final = lazy(r"^(?:#(?!#)\s*(?P<hash>\S.{3,500})|/memory\s+add\s+(?P<add>\S.{3,2000}))$", re.S)

# -- pasted material ------------------------------------------------------------------------
_FENCE: Final = lazy(r"```.*?(?:```|$)", re.S)
#: Lines a terminal, a log, a diff or a stack trace prints; none are typed as prose.
_PASTED_LINE: Final = lazy(
    r"^\s*(?:[⎿❯⏺│╭╰├└┌┐┘┤┬┴┼─═║✓✗✔✖✘•⨯▶►→⚠❌✅]|\$ |>>>|\.\.\. |at [\w.$<>]+ ?\(|File \"|Traceback|"
    r"(?i:error|warning|panic|fatal|failed|fail|info|debug)(?::|\[)|(?:ERROR|WARN|WARNING|FAIL|PASS|INFO|DEBUG)\s|ok\s+\S+/\S+|"
    r"E {2,}|[-+]{3} |@@ |[+-](?=\S)|={3,}|-{3,}|\d{4}-\d\d-\d\d[ T]\d\d:|\[\d|\w+\.(?:go|py|ts|js|rs|java):\d+|"
    r"#\d+ )")
_QUOTED_LINE: Final = lazy(r"^\s*>")
#: Machine-written lines: JSON members and objects, log records, git and CI chatter, code.
_MACHINE_LINE: Final = lazy(
    r"^\s*(?:\"[\w.-]+\"\s*:|[{}\[\]],?\s*$|\{\"|(?:def|func|class|import|from|return|const|let|var|if|for)\b.*[:{(=]\s*$|"
    r"(?:remote|Author|Date|commit|branch|Merge|Running|Step \d+|Session \w+):|\w+ \d+ \d\d:\d\d|"
    r".*\|(?:INFO|WARN|ERROR|DEBUG)\||"
    r"(?:rm|mv|cp|cd|git|go|npm|uv|pip|make|docker|curl|cat|ls|mkdir|export|sudo)\s+(?:\w+\s+)?(?:-\S+|\S*[/.]\S*))")
_HEADING: Final = lazy(r"^\s*#{1,6} \S", re.M)
#: A paragraph this long with no pronoun of the speaker is someone else's text (a review, a doc).
PASTED_PARAGRAPH_WORDS: Final = 30


@dataclass(frozen=True)
class Utterance:
    """The user's own words from one user-role text, and where they came from."""

    text: str
    origin: str
    language: str = "en"


def is_harness_text(text: str) -> bool:
    """True when user-role ``text`` was written by the agent's harness, not typed by the user."""
    stripped = text.lstrip()
    return bool(_HARNESS_RE.match(stripped)) or bool(_HOOK_ECHO.match(stripped)) or is_local_command(stripped)


def rejection_feedback(output: str) -> str | None:
    """What the user typed when declining a tool call, from the tool's result text, or None."""
    m = _REJECTED_SAID.search(output[:6000])
    if m is None:
        return None
    said = m.group("said").strip()
    return None if not said or is_harness_text(said) else said


def declined_call(output: str) -> bool:
    """True when a tool's result says the user declined the call (whether or not they said why)."""
    return bool(_DECLINED.search(output[:400]))


def memory_note(text: str) -> str | None:
    """The note of a ``# ...`` shortcut or a ``/memory add ...`` command, or None."""
    m = _MEMORY_NOTE.match(text.strip())
    if m is None:
        return None
    note = (m.group("hash") or m.group("add") or "").strip()
    if m.group("hash") and ("\n" in note or _HEADING.search(text.strip()[1:])):
        return None  # a Markdown document that starts with a heading, not a one-line note
    return note or None


def _speaks(paragraph: str, language: str) -> bool:
    """True when a paragraph has the speaker's own voice (a first- or second-person pronoun)."""
    cues = LANGUAGES.get(language) or LANGUAGES["en"]
    return bool(find(cues.self_voice, normalise(paragraph)) or find(cues.please, normalise(paragraph)))


def own_words(text: str, language: str = "en") -> str:
    """``text`` without what was pasted into it: code fences, terminal and log lines, quoted
    lines, Markdown documents, and long paragraphs in nobody's voice (a review comment, a spec)."""
    body = _FENCE.sub("\n", text)
    if len(_HEADING.findall(body)) >= 2:
        return ""  # a pasted document or plan (several headings): not a message
    kept: list[str] = []
    for paragraph in re.split(r"\n\s*\n", body):
        lines = [ln for ln in paragraph.splitlines()
                 if ln.strip() and not _PASTED_LINE.match(ln) and not _QUOTED_LINE.match(ln)
                 and not _MACHINE_LINE.match(ln)
                 and not ln.startswith(("    ", "\t")) and _alpha_share(ln) >= 0.55]
        if not lines:
            continue
        joined = "\n".join(lines)
        if len(joined.split()) >= PASTED_PARAGRAPH_WORDS and not _speaks(joined, language):
            continue
        kept.append(joined)
    return "\n\n".join(kept).strip()


def _alpha_share(line: str) -> float:
    """Share of letters and spaces in a line (prose is mostly letters; output is not)."""
    s = line.strip()
    return sum(1 for c in s if c.isalpha() or c.isspace()) / len(s) if s else 0.0


def user_utterance(text: str, origin: str = PROMPT) -> Utterance | None:
    """The user's own words in one user-role ``text``, or None when the harness wrote it.

    ``origin`` says how the text reached the agent (:data:`ORIGINS`); a ``# note`` or
    ``/memory add`` prompt becomes a :data:`MEMORY_NOTE` whatever it was passed as.
    """
    stripped = text.strip()
    if not stripped or origin == EXPANSION:
        return None
    note = memory_note(stripped)
    if note is not None:
        return Utterance(note, MEMORY_NOTE, detect_language(note).code)
    if is_harness_text(stripped):
        return None
    language = detect_language(stripped).code
    words = own_words(stripped, language)
    return Utterance(words, origin, language) if words else None
