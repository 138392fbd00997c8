"""What an external agent hears when its session starts: only what holds before there is a task.

In this order, within the session-start budget:

1. pinned memories (and the critical ones the store marks for every session);
2. the user's standing rules here (what they taught, what they said in sessions), most often
   confirmed first. A rule the user said in two sessions or more is said whatever its learned
   confidence: what the user typed, again, is the evidence. Said once, it needs the floor like any
   inference: a sentence read once may be a fragment of a one-off request (replayed on real
   sessions, one such fragment would have opened 86 sessions);
3. how the project is built, tested and checked, as the user taught it. Recipes the observer
   learned from agents' own runs are not said here: an agent found them unaided, and blind judges
   found them useless at every session start (said 139 times in 100 sessions); a recipe that
   replaced a failing command is a lesson, said before that command;
4. the gotchas of files with uncommitted changes (git says which, while the rest is read);
5. files past sessions read, each with its evidence, only when that list has predicted this
   project's sessions better than "the previous session's files" (``observer/start_files``).

No "relevant to this task" section: a session start has no task yet (the first prompt brings it).
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from desktop.agents.injection.formatting import Section, fit, render, shown_ids
from desktop.memory.lifecycle.freshness import as_of_now
from desktop.memory.text.tokens import count_tokens
from desktop.memory.triggers.warn import LESSON_SIGNALS
from desktop.memory.trust import injectable
from desktop.memory.types import Memory

if TYPE_CHECKING:
    from desktop.memory.project import Project

MAX_RULES: Final = 8
MAX_FACTS: Final = 5
RULE_TYPES: Final = ("preference", "requirement")
FACT_TYPES: Final = ("workflow_recipe",)


def _git_state(root: Path) -> tuple[list[str], str]:
    """(files with uncommitted changes, current branch); empty outside a git repository."""
    try:
        status = subprocess.run(["git", "status", "--porcelain", "--branch", "-uno"], cwd=root, capture_output=True,
                                text=True, timeout=1.5, check=False)
    except (OSError, subprocess.SubprocessError):
        return [], ""
    if status.returncode != 0:
        return [], ""
    changed: list[str] = []
    branch = ""
    for line in status.stdout.splitlines():
        if line.startswith("## "):
            branch = line[3:].split("...")[0].split(" ")[0]
            branch = "" if branch.startswith("No commits yet on") else branch
        elif len(line) > 3:
            changed.append(line[3:].split(" -> ")[-1].strip('"'))
    return changed[:50], branch


#: Which memories each section may say, beyond the type: the rules above the floor or that the user
#: said in more than one session, except lessons, which wait for their own moment (``warn.is_lesson``:
#: the tests the user wants with a change are said when a check passes on untested code);
#: the recipes a person taught.
RULES_WHERE: Final = ("(confidence >= ? OR (json_extract(metadata, '$.signal') = 'user_rule' "
                      "AND json_array_length(provenance_session_ids) >= 2)) AND coalesce(json_extract(metadata, "
                      f"'$.signal'), '') NOT IN ({', '.join(repr(s) for s in sorted(LESSON_SIGNALS))})")
TAUGHT_WHERE: Final = "(confidence >= ? AND source = 'user_taught')"


def _by_evidence(conn: Any, memory: Any, root: Path, types: tuple[str, ...], where: str, floor: float,
                 exclude: set[int], limit: int) -> list[Memory]:
    """Injectable memories of ``types`` that pass ``where`` (given ``floor``), the most often
    confirmed (sessions, then confidence) first."""
    marks = ",".join("?" * len(types))
    rows = conn.execute(
        f"SELECT id FROM memories WHERE deprecated = 0 AND candidate = 0 AND needs_review = 0 AND pinned = 0 "
        f"AND stale_at IS NULL AND type IN ({marks}) AND {where} "
        f"ORDER BY json_array_length(provenance_session_ids) DESC, confidence DESC, id DESC LIMIT ?",
        (*types, floor, limit + len(exclude))).fetchall()
    ids = [int(r[0]) for r in rows if int(r[0]) not in exclude][:limit]
    found = memory.get_many(ids) if ids else {}
    return as_of_now([found[i] for i in ids if i in found and injectable(found[i])], root)


def start_context(project: Project, memory: Any, root: Path, fmt: str, budget: int, floor: float,
                  exclude: set[int], first: list[Section] | None = None) -> tuple[str, list[int]]:
    """The session-start text and the ids it shows ('' and [] when nothing holds); ``first``: sections
    that open the same block (after a compaction, what the session had been shown)."""
    from desktop.memory.observer.start_files import start_files

    git: dict[str, tuple[list[str], str]] = {}
    asking = threading.Thread(target=lambda: git.setdefault("state", _git_state(root)), name="engram-hook-git",
                              daemon=True)
    asking.start()
    conn = project.db.reads.conn()
    always = [m for m in memory.always_inject(5) if m.id not in exclude and (m.pinned or m.confidence >= floor)]
    taken = exclude | {m.id for m in always}
    rules = _by_evidence(conn, project.memories, root, RULE_TYPES, RULES_WHERE, floor, taken, MAX_RULES)
    taken |= {m.id for m in rules}
    facts = _by_evidence(conn, project.memories, root, FACT_TYPES, TAUGHT_WHERE, floor, taken, MAX_FACTS)
    taken |= {m.id for m in facts}
    asking.join(2.0)
    changed, branch = git.get("state", ([], ""))
    gotchas = [m for m in (memory.gotchas_for(changed, exclude=taken, limit=4, min_confidence=floor)
                           if changed else []) if injectable(m)]
    evidence = start_files(conn).files
    lines = [f"{f.path} (read in {f.sessions} of the last {f.window} sessions)" for f in evidence]
    sections = [*(first or []), Section("Always remember", fit(always, budget // 4)),
                Section("The user's standing rules here", fit(rules, budget // 3)),
                Section("How this project is built, tested and checked", fit(facts, budget // 5)),
                Section(f"About your uncommitted changes (branch {branch or 'unknown'})", fit(gotchas, budget // 6)),
                Section("Files most sessions here read", lines=lines)]
    text = render(sections, fmt, heading="Engram memory")
    while text and count_tokens(text) > budget:
        biggest = max((s for s in sections if s.memories or s.lines), key=lambda s: len(s.memories) + len(s.lines))
        if biggest.lines:
            biggest.lines.pop()
        else:
            biggest.memories.pop()
        text = render(sections, fmt, heading="Engram memory")
    return text, shown_ids(sections)
