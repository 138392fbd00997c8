"""The one parser of citations: ``[Memory #12: a few words]`` (the words are optional: ``[Memory #12]``).

Agents are asked to cite what they use; every door reads citations here: the hooks
after a turn, Engram's own agent, the feedback rules, the app's chips. What counts as
cited is exactly what the app shows as a chip.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

#: ``[Memory #<id>]`` or ``[Memory #<id>: <brief>]``; the brief is one line of at most 200 characters.
CITATION: Final = re.compile(r"\[Memory #(\d+)(?::\s*([^\]\n]{0,200}))?\]")


@dataclass(frozen=True)
class Citation:
    """One citation in a text: the memory, the words the agent gave it, and where it stands."""

    memory_id: int
    brief: str
    start: int
    end: int


def find_citations(text: str) -> list[Citation]:
    """Every citation in ``text``, in order (repeats included)."""
    return [Citation(int(m.group(1)), (m.group(2) or "").strip(), m.start(), m.end())
            for m in CITATION.finditer(text or "")]


def cited_ids(text: str) -> list[int]:
    """The ids cited in ``text``, in order of first appearance."""
    return list(dict.fromkeys(c.memory_id for c in find_citations(text)))
