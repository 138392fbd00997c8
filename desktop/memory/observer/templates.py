"""Deterministic memory text: one template per signal class, written as useful sentences.

Templates never include counts or step numbers, so the same lesson learned again
renders the same text and the store's fingerprint dedup reinforces it instead of
adding a near copy. Text taken from tool output (an error line) is quoted and
checked for instruction-like wording: tool outputs are data, and a quoted
"remember: always ..." must never read as advice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from desktop.memory.observer.signals import (
    BACKTRACK,
    CO_ACCESS,
    CONFIG_TOUCH,
    CONTEXT_TOKEN_SPIKE,
    DEAD_END,
    ERROR_RETRY,
    EXPLICIT,
    EXTERNAL_REFERENCE,
    GLOB_IGNORE,
    IMPORT_CHASE,
    PARALLEL_CONFLICT,
    READ_ABANDON,
    REPEATED_GREP,
    SELF_CORRECTION,
    STEP_OVERRUN,
    TEST_ORDER,
    Signal,
    excerpt,
)
from desktop.memory.types import MemoryType

#: Wording that tries to instruct the reader. Found in text copied from tool output,
#: it marks the candidate tainted (needs review, lower confidence) whatever its source.
INSTRUCTION_RE: Final = re.compile(
    r"\b(?:remember|always|never|from now on|ignore (?:all|any|the|previous)|you must|you should|"
    r"disable|bypass|skip (?:the )?(?:auth|check|test)|system prompt|instructions?)\b", re.I)


def looks_like_instruction(text: str) -> bool:
    """True when text reads like an instruction to the agent rather than a fact."""
    return bool(INSTRUCTION_RE.search(text))


@dataclass
class Rendered:
    """A memory text and type for one signal, plus whether its words came from tool output."""

    type: str
    content: str
    files: list[str] = field(default_factory=list)
    from_tool_output: bool = False
    tags: list[str] = field(default_factory=list)


class MemoryWriterLLM(Protocol):
    """Optional: writes 1-3 sentence memory text from raw signal data (off by default)."""

    def write(self, kind: str, data: dict[str, Any], draft: str) -> str:
        """Return the memory text for a candidate (``draft`` is the template's text)."""


def _q(path: str) -> str:
    return f"`{path}`"


def _list(paths: list[str], limit: int = 4) -> str:
    shown = [_q(p) for p in paths[:limit]]
    return ", ".join(shown) + (" and others" if len(paths) > limit else "")


def render(sig: Signal, error: dict[str, Any] | None = None) -> Rendered | None:
    """The memory text for one signal, or None when the class has nothing to say alone."""
    k, d, files = sig.kind, sig.data, sig.files
    T = MemoryType
    if k == CO_ACCESS and len(files) >= 2:
        a, b = files[0], files[1]
        return Rendered(T.CAUSAL_DEPENDENCY, f"{_q(a)} and {_q(b)} are usually worked on together: "
                        f"when changing one, check the other.", [a, b])
    if k == SELF_CORRECTION:
        where = f" while working on {_q(files[0])}" if files else ""
        return Rendered(T.GOTCHA, f"An agent corrected a wrong assumption{where}: \"{d['sentence']}\"", files)
    if k == ERROR_RETRY and error is not None:
        what = f"`{excerpt(error['command'], 80)}`" if error.get("command") else f"the {error['tool']} tool"
        msg = excerpt(error["message"], 160)
        fix = error.get("resolved_how")
        tail = f" It was resolved by {fix}." if fix else " No fix was found in that session."
        return Rendered(T.ERROR_PATTERN, f"Running {what} can fail with \"{msg}\".{tail}",
                        list(error.get("fix_files", []))[:4], from_tool_output=True)
    if k == REPEATED_GREP:
        return Rendered(T.MODULE_INSIGHT, f"Agents search for '{excerpt(d['pattern'], 80)}' repeatedly before "
                        f"finding it; note where it lives when you find it.", files)
    if k == READ_ABANDON and files:
        return Rendered(T.GOTCHA, f"{_q(files[0])} is read often but rarely changed: it is reference material, "
                        f"usually not where a fix belongs.", files[:1])
    if k == TEST_ORDER:
        order = "read the tests before changing the implementation" if d.get("tests_first") else \
            "change the implementation first and look at the tests afterwards"
        return Rendered(T.TASK_CALIBRATION, f"In this project agents usually {order}.", files)
    if k == STEP_OVERRUN:
        return Rendered(T.TASK_CALIBRATION, "Tasks here tend to take noticeably more steps than planned; "
                        "budget extra steps for verification.")
    if k == BACKTRACK and files:
        return Rendered(T.GOTCHA, f"{_q(files[0])} often needs a second edit soon after the first: read the "
                        f"surrounding code before changing it.", files[:1])
    if k == CONFIG_TOUCH and len(files) >= 2:
        return Rendered(T.CAUSAL_DEPENDENCY, f"Changes to {_list(files[1:])} went together with a change to "
                        f"the configuration file {_q(files[0])}.", files)
    if k == GLOB_IGNORE:
        return Rendered(T.GOTCHA, f"The search '{excerpt(d['pattern'], 80)}' lists many files that are not "
                        f"relevant; use a narrower pattern.")
    if k == CONTEXT_TOKEN_SPIKE and files:
        return Rendered(T.CONTEXT_COST, f"Reading {_q(files[0])} whole costs a lot of context; read the part "
                        f"you need.", files[:1])
    if k == EXTERNAL_REFERENCE and files:
        return Rendered(T.MODULE_INSIGHT, f"Work on {_q(files[0])} needed outside documentation (a web lookup); "
                        f"check the upstream docs before changing it.", files[:1])
    if k == IMPORT_CHASE and len(files) >= 2:
        return Rendered(T.CAUSAL_DEPENDENCY, f"{_q(files[0])} depends on {_q(files[1])}: understanding one "
                        f"needs the other.", files[:2])
    if k == PARALLEL_CONFLICT and files:
        return Rendered(T.GOTCHA, f"{_q(files[0])} was edited by several parallel sub-agents at once; "
                        f"coordinate changes to it.", files[:1])
    if k == DEAD_END:
        if d.get("origin") == "backtrack" and files:
            left = d.get("abandoned") or []
            extra = f" (it had touched {_list(left, 3)})" if left else ""
            return Rendered(T.DEAD_END, f"An approach around {_q(files[0])} was explored at length and then "
                            f"abandoned for a different set of files{extra}.", files[:1] + left[:3])
        return Rendered(T.DEAD_END, f"An approach was abandoned: \"{d['sentence']}\"", files)
    if k == EXPLICIT:
        kind = d.get("type") if d.get("type") in {t.value for t in MemoryType} else T.NOTE
        return Rendered(str(kind), str(d["content"]), files)
    return None
