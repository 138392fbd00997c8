"""Per-project preferences kept in the project's own database (table project_meta).

Trust level, write policy, the auto-memory switch, the promotion preset and the
counters behind trust advancement and the session-summary rules live with the
project, so they travel with its memory. Reads happen on a pool thread; writes
are one small op through the writer, like every other write.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import Future
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from desktop.memory.store.writer import FnOp, Tx
from desktop.memory.trust_levels import PROMOTION_PRESETS as PRESET_TABLE

log = logging.getLogger("engram.ui")

# Plain keys other subsystems (injection policy, observer) can read without the UI.
PLAIN_KEYS = ("trust_level", "write_policy", "auto_memory", "promotion_preset")
STATE_KEY = "ui_state"

WRITE_POLICIES = ("off", "read_only", "confirm_each", "automatic")
# One list of presets: the core defines what each one does (desktop/memory/trust_levels.py).
PROMOTION_PRESETS = tuple(PRESET_TABLE)


@dataclass
class ProjectPrefs:
    """Everything the UI decides per project."""

    trust_level: int = 1
    write_policy: str = "confirm_each"
    auto_memory: bool = True
    promotion_preset: str = "balanced"
    sessions: int = 0
    suggested: int = 0          # new memories proposed to the user across sessions
    confirmed: int = 0          # ... of which the user confirmed
    corrected: int = 0          # memories the user flagged as wrong (all sessions)
    summary_dismiss_streak: int = 0
    onboarding_done: bool = False
    regression_declined_at: int = -1  # session count when the user last said no
    extra: dict[str, Any] = field(default_factory=dict)

    def rows(self) -> list[tuple[str, str]]:
        """The key/value rows this object is stored as."""
        data = asdict(self)
        # auto_memory is shared with desktop.memory.lifecycle.control, which reads "on"/"off".
        out = [(k, ("on" if data.pop(k) else "off") if k == "auto_memory" else json.dumps(data.pop(k)))
               for k in PLAIN_KEYS]
        out.append((STATE_KEY, json.dumps(data)))
        return out


def load_prefs(db: Any) -> ProjectPrefs:
    """Read the preferences (pool thread; defaults for a new project)."""
    conn = db.reads.conn()
    rows = dict(conn.execute(
        f"SELECT key, value FROM project_meta WHERE key IN ({','.join('?' * (len(PLAIN_KEYS) + 1))})",
        (*PLAIN_KEYS, STATE_KEY)).fetchall())
    values: dict[str, Any] = {}
    known = {f.name for f in fields(ProjectPrefs)}
    try:
        state = json.loads(rows.get(STATE_KEY) or "{}")
        values.update({k: v for k, v in state.items() if k in known})
        for key in PLAIN_KEYS:
            if key in rows:
                raw = rows[key]
                values[key] = (str(raw).strip('"').lower() not in ("off", "false")) if key == "auto_memory" \
                    else json.loads(raw)
    except ValueError:
        log.warning("ignoring unreadable project preferences")
    prefs = ProjectPrefs(**values)
    if prefs.write_policy not in WRITE_POLICIES:
        prefs.write_policy = "confirm_each"
    prefs.trust_level = min(4, max(1, int(prefs.trust_level)))
    return prefs


def save_prefs(db: Any, prefs: ProjectPrefs) -> Future[int]:
    """Store the preferences through the writer (one upsert per key, one transaction)."""
    rows = prefs.rows()

    def upsert(tx: Tx) -> int:
        for key, value in rows:
            tx.execute("INSERT INTO project_meta(key, value) VALUES (?, ?) "
                       "ON CONFLICT(key) DO UPDATE SET value=excluded.value", (key, value))
        tx.changed("project_meta", "updated", [k for k, _ in rows])
        return len(rows)
    return db.writer.submit(FnOp("save_project_prefs", upsert))
