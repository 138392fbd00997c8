"""Agent rule files (CLAUDE.md, AGENTS.md, GEMINI.md, .cursorrules, ...) read as whole rules.

Real rule files are Markdown written for people: lines hard-wrapped at 80 columns,
bullets with nested bullets under them, shell blocks, tables, HTML comments and
include lines (``@AGENTS.md``) that tell an agent to read another file. Cutting them
line by line turned one wrapped bullet into several fragments. Here the Markdown
structure decides what one rule is:

* a top-level list item, with its wrapped continuation lines joined and its nested
  items kept under it (one rule, not one per sub-bullet);
* a paragraph, its wrapped lines joined;
* in a shell code block, a ``# comment`` line followed by its commands ("Run all
  tests: ``composer test``"); any other code block is skipped, it illustrates;
* headings are context (the rule's section and a hint for its type), never a rule;
  tables, HTML comments, include lines, horizontal rules and a file's sentence about
  itself ("This file provides guidance to ...") are skipped.

The same parser serves the first-run dialog and ``engram import``, so the app and the
CLI propose the same rules.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.rows import fingerprint
from desktop.memory.types import MemorySource, MemoryType

log = logging.getLogger("engram.lifecycle")

RULE_FILES = ("CLAUDE.md", "AGENTS.md", "GEMINI.md", ".cursorrules", ".github/copilot-instructions.md")
RULE_DIRS = (".cursor/rules",)
MAX_RULE_FILE_BYTES = 512 * 1024  # a rule file is read whole; a bigger one is not a rule file
MIN_RULE_CHARS = 8
MAX_RULE_CHARS = 2000
MAX_ITEM_COMMANDS = 6

_BULLET = re.compile(r"^(?P<indent>\s*)(?:[-*+]|\d{1,3}[.)])\s+(?P<text>.*)$")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")
_RULER = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE = re.compile(r"^\s*\|.*\|\s*$")
_INCLUDE = re.compile(r"^\s*(?:@import\s+\S+|@[\w./~-]+\.(?:md|mdc|txt))\s*$", re.I)
_SELF_REFERENCE = re.compile(r"^(?:this|the)\s+(?:file|document|guide)\b", re.I)
_SHELL_LANGS = {"", "bash", "sh", "shell", "console", "zsh", "shell-session"}
_TYPE_HINTS = [
    (re.compile(r"\b(never|don't|do not|avoid|careful|beware|must not|forbidden|warning)\b", re.I),
     MemoryType.GOTCHA.value),
    (re.compile(r"`[^`]*\b(make|npm|pnpm|yarn|npx|pytest|cargo|go|pip|uv|docker|just|composer|gradle|mvn)\b", re.I),
     MemoryType.WORKFLOW_RECIPE.value),
    (re.compile(r"^(run|to \w+,? run|build with|test with)\b", re.I), MemoryType.WORKFLOW_RECIPE.value),
    (re.compile(r"\b(we chose|we use|instead of|decided|decision)\b", re.I), MemoryType.DECISION.value),
    (re.compile(r"\b(prefer|style|naming|format|indent|always use|convention)\b", re.I),
     MemoryType.PREFERENCE.value),
    (re.compile(r"\b(must|always|required|should)\b", re.I), MemoryType.REQUIREMENT.value),
]
_HEADING_HINTS = [
    (re.compile(r"gotcha|pitfall|warning|caveat|avoid", re.I), MemoryType.GOTCHA.value),
    (re.compile(r"command|build|test|run|workflow|deploy|setup|install|recipe", re.I),
     MemoryType.WORKFLOW_RECIPE.value),
    (re.compile(r"decision|architecture", re.I), MemoryType.DECISION.value),
    (re.compile(r"style|convention|guideline|format|quality", re.I), MemoryType.PREFERENCE.value),
    (re.compile(r"requirement|rule|must|constraint", re.I), MemoryType.REQUIREMENT.value),
]


@dataclass
class Rule:
    """One rule cut out of a rule file, with the headings it sits under."""

    text: str
    headings: list[str] = field(default_factory=list)

    @property
    def section(self) -> str:
        """The nearest heading ("" at the top of the file)."""
        return self.headings[-1] if self.headings else ""


def rule_type(text: str, headings: list[str] | None = None) -> str:
    """The memory type a rule reads as: its own words first, then its section's heading, else a note."""
    for rx, mtype in _TYPE_HINTS:
        if rx.search(text):
            return mtype
    for heading in reversed(headings or []):
        for rx, mtype in _HEADING_HINTS:
            if rx.search(heading):
                return mtype
    return MemoryType.NOTE.value


def _strip_comments(text: str) -> str:
    """Drop HTML comments (one line or several) before any structure is read."""
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


class _Reader:
    """A line-by-line Markdown reader that collects rules (one pass, no regex over the whole text)."""

    def __init__(self) -> None:
        self.rules: list[Rule] = []
        self.headings: list[tuple[int, str]] = []
        self.item: list[str] = []        # the open top-level list item: its first line, then sub-lines
        self.item_indent = 0             # where the item's text starts (continuations sit at least there)
        self.paragraph: list[str] = []
        self.blank = False               # a blank line came after the item's last line
        self.lead: list[str] | None = None  # "Include:" and the items of the list it introduces

    def _context(self) -> list[str]:
        return [h for _level, h in self.headings]

    def _emit(self, text: str) -> None:
        text = text.strip()
        if MIN_RULE_CHARS <= len(text) <= MAX_RULE_CHARS and not _SELF_REFERENCE.match(text):
            self.rules.append(Rule(text, self._context()))

    def flush(self) -> None:
        """Close the open item and paragraph (a paragraph ending in ':' waits for the list it leads)."""
        if self.item:
            head, *subs = self.item
            text = "\n".join([head, *subs]) if subs else head
            if self.lead is not None:
                self.lead.append("- " + text.replace("\n", "\n  "))
            else:
                self._emit(text)
            self.item = []
        if self.paragraph:
            text = " ".join(self.paragraph)
            self.paragraph = []
            self.close_lead()
            if text.endswith(":"):
                self.lead = [text]
            else:
                self._emit(text)

    def close_lead(self) -> None:
        """Emit a lead-in paragraph with the list items gathered under it."""
        if self.lead is not None:
            self._emit("\n".join(self.lead))
            self.lead = None

    def heading(self, level: int, text: str) -> None:
        """A heading closes what is open and becomes the context of what follows."""
        self.flush()
        self.close_lead()
        self.headings = [(lv, h) for lv, h in self.headings if lv < level] + [(level, _plain(text))]

    def line(self, raw: str) -> None:
        """Read one line that is not a heading, fence, table row, ruler or include."""
        line = raw.rstrip()
        if line.lstrip().startswith(">"):  # a quoted block reads as its text
            line = re.sub(r"^\s*>\s?", "", line)
        if not line.strip():
            self.blank = True
            if self.paragraph:
                self.flush()
            return
        bullet = _BULLET.match(line)
        indent = len(line) - len(line.lstrip())
        after_blank, self.blank = self.blank, False
        if bullet and (not self.item or indent < self.item_indent):
            self.flush()
            self.item = [bullet.group("text").strip()]
            self.item_indent = len(line) - len(bullet.group("text"))
            return
        if self.item and bullet:  # a nested item stays with its parent
            self.item.append("- " + bullet.group("text").strip())
            return
        if self.item and (indent >= 1 or not after_blank):  # wrapped (or lazily continued) text
            self.item[-1] += " " + line.strip()
            return
        if self.item:
            self.flush()
        self.close_lead()
        self.paragraph.append(line.strip())

    def item_code(self, lang: str, lines: list[str]) -> None:
        """A code block inside a list item: its commands complete the item ("add: `git commit ...`")."""
        commands = [ln.strip().removeprefix("$ ") for ln in lines
                    if ln.strip() and not ln.strip().startswith("#")]
        if lang.lower() in _SHELL_LANGS and commands:
            self.item[-1] += " " + "; ".join(f"`{c}`" for c in commands[:MAX_ITEM_COMMANDS])

    def code_block(self, lang: str, lines: list[str]) -> None:
        """A shell block: each ``# what it does`` comment with the commands under it is a rule."""
        if lang.lower() not in _SHELL_LANGS:
            return
        what = ""
        commands: list[str] = []

        def close() -> None:
            if what and commands:
                self._emit(f"{what}: " + "; ".join(f"`{c}`" for c in commands))

        for raw in lines:
            text = raw.strip().removeprefix("$ ")
            if text.startswith("#") and not text.startswith("#!"):
                close()
                what, commands = text.lstrip("#").strip(), []
            elif text:
                commands.append(text)
        close()


def _plain(text: str) -> str:
    """Heading text without emphasis markers or emoji padding."""
    return re.sub(r"[*_`]+", "", text).strip(" :")


def parse_rule_file(text: str) -> list[Rule]:
    """The rules of one rule file, in file order (see the module docstring for what one rule is)."""
    reader = _Reader()
    lines = _strip_comments(text.replace("\r\n", "\n")).split("\n")
    i = 0
    if lines and lines[0].strip() == "---":  # front matter (.mdc, some AGENTS.md): metadata, not rules
        end = next((n for n in range(1, len(lines)) if lines[n].strip() == "---"), None)
        if end is not None:
            i = end + 1
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            marker, lang = fence.group(1), fence.group(2)
            body: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(marker[:3]):
                body.append(lines[i])
                i += 1
            if reader.item and line[:1].isspace():
                reader.item_code(lang, body)  # indented under the item: part of it
            else:
                reader.flush()
                reader.close_lead()
                reader.code_block(lang, body)
            i += 1
            continue
        heading = _HEADING.match(line)
        if heading:
            reader.heading(len(heading.group(1)), heading.group(2))
        elif _RULER.match(line) or _TABLE.match(line) or _INCLUDE.match(line):
            reader.flush()
            reader.close_lead()
        else:
            reader.line(line)
        i += 1
    reader.flush()
    reader.close_lead()
    return reader.rules


def find_rule_files(root: Path) -> list[Path]:
    """The agent rule files present in a project folder (the fixed names, then .cursor/rules/)."""
    found = [root / name for name in RULE_FILES if (root / name).is_file()]
    for d in RULE_DIRS:
        folder = root / d
        if folder.is_dir():
            found += sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".md", ".mdc", ""))
    return found


def rules_as_memories(rules: list[Rule], source: str) -> list[NewMemory]:
    """Proposed ``imported`` memories for the rules of ``source`` (a path relative to the project)."""
    out: list[NewMemory] = []
    for rule in rules:
        tags = ["imported-rules"] + ([re.sub(r"[^\w-]+", "-", rule.section.lower()).strip("-")[:40]]
                                     if rule.section else [])
        out.append(NewMemory(content=rule.text, type=rule_type(rule.text, rule.headings),
                             source=MemorySource.IMPORTED.value, confidence=0.85, tags=[t for t in tags if t],
                             provenance=[{"kind": "rule_file", "file": source, "section": rule.section}],
                             metadata={"rule_file": source, "section": " › ".join(rule.headings)}))
    return out


def scan_rule_files(root: Path) -> list[NewMemory]:
    """Every rule of the project's rule files, once each (CLAUDE.md often repeats AGENTS.md). Blocking."""
    seen: set[str] = set()
    out: list[NewMemory] = []
    for path in find_rule_files(root):
        try:
            if path.stat().st_size > MAX_RULE_FILE_BYTES:
                log.info("%s is too large to be a rule file; skipped", path)
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
            continue
        for item in rules_as_memories(parse_rule_file(text), path.relative_to(root).as_posix()):
            key = fingerprint(item.content)
            if key not in seen:
                seen.add(key)
                out.append(item)
    return out
