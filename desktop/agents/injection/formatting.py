"""Per-agent formatting of injected memory and recognition of citations.

Design 001 section 15: XML for Claude (``<project_memory>``), Markdown with
headers for Gemini, plain text for everyone else. Every memory carries its id so
the agent can cite it as ``[Memory #<id>: ...]``; citations found in the agent's
output are counted as uses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from desktop.memory.privacy.boundary import redact_then_cut
from desktop.memory.types import Memory

# No angle brackets anywhere in what is injected: Gemini CLI escapes every < and > of a hook's
# context (the model then reads "&lt;id&gt;"), and Claude gets the XML form below.
CITATION_HINT = ("When a memory below helps you, cite it inline as [Memory #N: a few words], N being its "
                 "number. Memories can be stale: trust the code when they disagree.")
# A "<" that could open or close a tag inside Engram's own XML (</memory>, <instructions>, <!--).
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def clean(text: str, fmt: str) -> str:
    """``text`` as it may appear in ``fmt`` without any escape the model would read literally.

    XML (Claude): a ``<`` that would start a tag becomes ``‹`` (``a < b``, ``->`` and ``&`` stay
    as written); Markdown (Gemini, whose CLI HTML-escapes every angle bracket of a hook's
    output): every ``<`` and ``>`` becomes ``‹``/``›``; plain text is left as it is.
    """
    if fmt == "xml":
        return _TAG_START.sub("‹", text)
    if fmt == "markdown":
        return text.replace("<", "‹").replace(">", "›")
    return text


def _attr(text: str) -> str:
    """An XML attribute value with its quotes (no character in it needs an escape)."""
    return '"' + re.sub(r'[<>"&\n]', " ", text) + '"'


_TAGS = {"dead_end": "AVOID", "error_pattern": "KNOWN ERROR", "gotcha": "GOTCHA"}


@dataclass
class Section:
    """A titled group of memories or free-text lines to inject."""

    title: str
    memories: list[Memory] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    conflicts: set[int] = field(default_factory=set)



def _label(m: Memory, conflicts: set[int]) -> str:
    tag = _TAGS.get(m.type, m.type.upper().replace("_", " "))
    flag = " [⚠ CONFLICT]" if m.id in conflicts else ""
    return f"{tag}{flag}"


def _one_line(text: str, limit: int = 600) -> str:
    # Everything injected passes the scanner again (a rule added after the memory was
    # stored still applies), redacted before the cut so no secret's head survives it.
    return redact_then_cut(" ".join(text.split()), limit, "…")


def _unique(sections: Iterable[Section]) -> list[Section]:
    """The sections with every memory and line said once: where it first appears."""
    seen_ids: set[int] = set()
    seen_lines: set[str] = set()
    out: list[Section] = []
    for s in sections:
        mems = [m for m in s.memories if m.id not in seen_ids]
        seen_ids |= {m.id for m in mems}
        lines = [line for line in dict.fromkeys(s.lines) if line not in seen_lines]
        seen_lines |= set(lines)
        if mems or lines:
            out.append(Section(s.title, mems, lines, s.conflicts))
    return out


def shown_ids(sections: Iterable[Section]) -> list[int]:
    """The ids of the memories ``render`` shows for ``sections``, in order."""
    return [m.id for s in _unique(sections) for m in s.memories]


def render(sections: Iterable[Section], fmt: str, *, heading: str = "Project memory",
           hint: bool = True) -> str:
    """Render sections in ``fmt`` ("xml" | "markdown" | "plain"); empty sections are left out.

    One block says each thing once: a memory or line already shown by an earlier section is
    left out of the later ones, and the citation hint is only given when a memory is shown.
    """
    secs = _unique(sections)
    if not secs:
        return ""
    hint = hint and any(s.memories for s in secs)
    if fmt == "xml":
        parts = ["<project_memory>"]
        if hint:
            parts.append(f"<instructions>{CITATION_HINT}</instructions>")
        for s in secs:
            parts.append(f"<section name={_attr(s.title)}>")
            for m in s.memories:
                conflict = ' conflict="true"' if m.id in s.conflicts else ""
                files = f" files={_attr(','.join(m.related_files[:3]))}" if m.related_files else ""
                parts.append(f'<memory id="{m.id}" type="{m.type}"{conflict}{files}>'
                             f"{clean(_one_line(m.content), fmt)}</memory>")
            parts += [f"<item>{clean(line, fmt)}</item>" for line in s.lines]
            parts.append("</section>")
        parts.append("</project_memory>")
        return "\n".join(parts)
    if fmt == "markdown":
        parts = [f"## {heading}"]
        if hint:
            parts.append(f"_{CITATION_HINT}_")
        for s in secs:
            parts.append(f"### {clean(s.title, fmt)}")
            parts += [f"- **{_label(m, s.conflicts)}** [#{m.id}] {clean(_one_line(m.content), fmt)}"
                      for m in s.memories]
            parts += [f"- {clean(line, fmt)}" for line in s.lines]
        return "\n".join(parts)
    parts = [heading.upper()]
    if hint:
        parts.append(CITATION_HINT)
    for s in secs:
        parts.append(f"{s.title}:")
        parts += [f"- #{m.id} [{_label(m, s.conflicts)}] {_one_line(m.content)}" for m in s.memories]
        parts += [f"- {line}" for line in s.lines]
    return "\n".join(parts)


def conflict_lines(pairs: list[tuple[Memory, Memory]]) -> list[str]:
    """The design's conflict marker, one line per pair; both memories are shown in the same block
    (flagged), so the line names them by id instead of saying their text again."""
    return [f"[⚠ CONFLICT] Memory #{a.id} and Memory #{b.id} disagree: check the code to see which is current."
            for a, b in pairs]


def fit(memories: list[Memory], budget: int, phase: str | None = None) -> list[Memory]:
    """The memories (best first) that ``SearchService.pack`` fits in ``budget`` tokens, in their order.

    One packing for every door: the retrieval packer chooses (per-phase type shares,
    merged overlaps, real token counts); this module only renders what it chose.
    """
    if not memories or budget <= 0:
        return []
    # The packer itself (what SearchService.pack calls), not the service: the service pulls in
    # the retrieval pipeline and numpy, which a hook process that only formats never uses.
    from desktop.memory.retrieval.packing import pack
    from desktop.memory.retrieval.types import Explanation, SearchResult

    # Pack what will be rendered: the one-line, redacted, cut text, not the stored content.
    shown = [replace(m, content=_one_line(m.content)) for m in memories]
    n = len(shown)
    results = [SearchResult(m, float(n - i), Explanation()) for i, m in enumerate(shown)]
    packed = pack(results, budget, phase)
    chosen = {mid for item in packed.items for mid in item.memory_ids}
    return [m for m in memories if m.id in chosen]
