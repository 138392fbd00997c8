"""Tool calls written down for a session's observer by a hook that did not observe them itself.

A hook answered without the warm service is a process that lives for one event. Restoring the
session's observer there (importing every detector, decompressing the checkpoint, saving it
again) cost 100-200 ms on each tool call, and the agent waits for the hook. Such a hook appends
the call to ``hook_journal`` instead: one row through the writer. The observer catches up on the
rows, in order, the next time it runs for the session: the warm service's first event of it, the
session's end, or the recovery of a session that never ended. Promotion drops the rows with the
checkpoint, in the same write. The table is migration ``0023_hook_journal`` (``observer/schema``).

Nothing here imports the detectors: appending stays cheap.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

from desktop.memory.store.writer import FnOp, Tx, iso, utc_now

if TYPE_CHECKING:
    from desktop.memory.observer.observer import Observer
    from desktop.memory.observer.scratchpad import Scratchpad

#: A session's journal stops growing past this many calls (the checkpoint path has no such bound,
#: but a journal is read whole when the observer catches up).
MAX_ROWS: Final = 2000


@dataclass(frozen=True)
class JournalCall:
    """One tool call and its result, as the observer will see it."""

    tool: str                       # canonical tool name
    tool_name: str                  # the agent's own name for it
    args: dict[str, Any]
    files: list[str] = field(default_factory=list)
    output: str = ""
    error: bool = False
    call_id: str = ""
    at: float = 0.0


def append(db: Any, session_id: str, agent: str, root: str, call: JournalCall) -> None:
    """Write one call down for the session's observer (durable on return)."""
    text = json.dumps(asdict(call), ensure_ascii=False, default=str)

    def write(tx: Tx) -> None:
        full = tx.execute("SELECT 1 FROM hook_journal WHERE session_id = ? LIMIT 1 OFFSET ?",
                          (session_id, MAX_ROWS - 1)).fetchall()
        if not full:
            tx.execute("INSERT INTO hook_journal(session_id, agent, root, written_at, call) VALUES (?,?,?,?,?)",
                       (session_id, agent, root, tx.now, text))
    db.writer.submit(FnOp("hook_journal", write)).result(10)


def _calls(db: Any, session_id: str) -> tuple[int, str, str, list[JournalCall]]:
    """(last row id, agent, root, the calls in order); (0, '', '', []) when none."""
    rows = db.reads.conn().execute("SELECT id, agent, root, call FROM hook_journal WHERE session_id = ? ORDER BY id",
                                   (session_id,)).fetchall()
    calls: list[JournalCall] = []
    for _, _, _, text in rows:
        try:
            data = json.loads(text)
            calls.append(JournalCall(str(data["tool"]), str(data["tool_name"]), dict(data["args"]),
                                     [str(f) for f in data.get("files") or []], str(data.get("output") or ""),
                                     bool(data.get("error")), str(data.get("call_id") or ""),
                                     float(data.get("at") or 0.0)))
        except (ValueError, KeyError, TypeError):
            continue  # a row this version cannot read teaches nothing; the others still do
    if not rows:
        return 0, "", "", []
    return int(rows[-1][0]), str(rows[-1][1]), str(rows[-1][2]), calls


def observe_call(obs: Observer, session_id: str, call: JournalCall) -> None:
    """Feed one tool call and its result to the session's observer."""
    from desktop.memory.observer.events import StepComplete, ToolCall, ToolResult, cap_text

    step = obs.sp.step + 1
    call_id = call.call_id or f"hook-{step}"
    obs.observe(ToolCall(session_id, step, call_id, call.tool, call.tool_name, call.args, tuple(call.files), call.at))
    obs.observe(ToolResult(session_id, step, call_id, call.tool, cap_text(call.output), call.error, None, call.at))
    obs.observe(StepComplete(session_id, step, call.at))


def catch_up(db: Any, session_id: str, pad: Scratchpad | None) -> tuple[Observer | None, int]:
    """The session's observer, restored from its checkpointed scratchpad ``pad`` (or begun at the
    journal's first call), with every written-down call observed; and the last row observed (0:
    none). None when there is neither. The rows stay until the caller has kept what they taught:
    a promotion drops them in its own write, a checkpoint then :func:`drop`."""
    from desktop.memory.observer.events import SessionStart
    from desktop.memory.observer.observer import Observer

    obs = Observer(session_id, scratchpad=pad) if pad is not None else None
    last, agent, root, calls = _calls(db, session_id)
    if not last:
        return obs, 0
    if obs is None:
        obs = Observer(session_id)
        obs.observe(SessionStart(session_id, agent, root, None, "main", calls[0].at if calls else 0.0))
    for call in calls:
        observe_call(obs, session_id, call)
    return obs, last


def drop(db: Any, session_id: str, *, up_to: int | None = None) -> None:
    """Forget a session's written-down calls (those up to row ``up_to``, or all)."""
    def write(tx: Tx) -> None:
        if up_to is None:
            tx.execute("DELETE FROM hook_journal WHERE session_id = ?", (session_id,))
        else:
            tx.execute("DELETE FROM hook_journal WHERE session_id = ? AND id <= ?", (session_id, up_to))
    db.writer.submit(FnOp("hook_journal_drop", write)).result(10)


def pending(db: Any, *, older_than_s: float | None = None) -> list[str]:
    """Sessions with written-down calls (with ``older_than_s``: none written for that long)."""
    rows = db.reads.conn().execute(
        "SELECT session_id, max(written_at) FROM hook_journal GROUP BY session_id ORDER BY min(id)").fetchall()
    if older_than_s is None:
        return [str(r[0]) for r in rows]
    cutoff = iso(utc_now() - timedelta(seconds=older_than_s))
    return [str(r[0]) for r in rows if str(r[1]) < cutoff]
