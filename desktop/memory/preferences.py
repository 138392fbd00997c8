"""A project's preferences, kept in its own database (``project_meta``), one implementation for every door.

Trust level, write policy, the auto-memory switch and the promotion preset are
*preferences*: every change is audited (who, from what, to what), whether it was
made in the app's Trust dialog, with ``engram preferences`` or ``engram auto-memory``.
The counters behind trust advancement and the session-summary rules (sessions,
suggested, confirmed, ...) travel with them under one key and are not audited: they
count, they decide nothing.

The four preference keys are stored plainly (``auto_memory`` as on/off) so the hooks,
the observer's gate and the injection threshold read them with one small query.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import Future
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, ClassVar, Final

from desktop.memory.store.database import Database
from desktop.memory.store.errors import ValidationError
from desktop.memory.store.writer import Tx, WriteOp
from desktop.memory.trust_levels import (
    DEFAULT_LEVEL,
    PROMOTION_PRESETS,
    PromotionPreset,
    clamp_level,
    injection_threshold,
    promotion_preset,
)

log = logging.getLogger("engram.preferences")

#: The preferences a person chooses (audited), stored one key each.
PREFERENCE_KEYS: Final = ("trust_level", "write_policy", "auto_memory", "promotion_preset")
#: The counters and flags behind the trust rules, stored together as JSON (not audited).
STATE_KEY: Final = "ui_state"
WRITE_POLICIES: Final = ("off", "read_only", "confirm_each", "automatic")
PRESET_NAMES: Final = tuple(PROMOTION_PRESETS)


@dataclass
class ProjectPrefs:
    """Everything decided per project: four preferences, then the counters of the trust rules."""

    trust_level: int = DEFAULT_LEVEL
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

    def agents_may_learn(self) -> bool:
        """True when sessions may add memories: the write policy allows it and auto-memory is on."""
        return self.write_policy not in ("off", "read_only") and self.auto_memory

    def injection_floor(self) -> float:
        """The confidence a memory needs to reach an agent at this trust level."""
        return injection_threshold(self.trust_level)

    def preferences(self) -> dict[str, str]:
        """The four preferences as stored (``auto_memory`` as on/off, the rest JSON-encoded)."""
        return {"trust_level": json.dumps(int(self.trust_level)), "write_policy": json.dumps(self.write_policy),
                "auto_memory": "on" if self.auto_memory else "off",
                "promotion_preset": json.dumps(self.promotion_preset)}

    def state(self) -> str:
        """The counters and flags as stored (everything but the four preferences)."""
        data = asdict(self)
        for key in PREFERENCE_KEYS:
            data.pop(key)
        return json.dumps(data)


def validate(prefs: ProjectPrefs) -> None:
    """Raise ValidationError for a preference no door may store."""
    if not isinstance(prefs.trust_level, int) or not 1 <= prefs.trust_level <= 4:
        raise ValidationError(f"The trust level is a number from 1 to 4, not {prefs.trust_level!r}.")
    if prefs.write_policy not in WRITE_POLICIES:
        raise ValidationError(f"Unknown write policy {prefs.write_policy!r}; use one of: {', '.join(WRITE_POLICIES)}.")
    if prefs.promotion_preset not in PRESET_NAMES:
        raise ValidationError(f"Unknown promotion preset {prefs.promotion_preset!r}; use one of: "
                              f"{', '.join(PRESET_NAMES)}.")


_WORDS: Final = {"trust_level": "trust level", "write_policy": "write policy",
                 "promotion_preset": "promotion preset"}


def _reason(key: str, value: str) -> str:
    if key == "auto_memory":
        return f"automatic memory creation turned {value}"
    return f"{_WORDS[key]} set to {json.loads(value)}"


def _upsert(tx: Tx, key: str, value: str) -> None:
    tx.execute("INSERT INTO project_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = "
               "excluded.value", (key, value))


class SavePreferences(WriteOp[list[str]]):
    """Store the preferences (one audit entry per one that changed) and, unless told not to, the counters."""

    name: ClassVar[str] = "save_preferences"

    def __init__(self, prefs: ProjectPrefs, *, actor: str = "user", counters: bool = True) -> None:
        """Raises ValidationError before anything is queued."""
        validate(prefs)
        self.values = prefs.preferences()
        self.state = prefs.state() if counters else None
        self.actor = actor

    def apply(self, tx: Tx) -> list[str]:
        """Write what changed; returns the preference keys that changed."""
        marks = ",".join("?" * len(PREFERENCE_KEYS))
        old = dict(tx.execute(f"SELECT key, value FROM project_meta WHERE key IN ({marks})", PREFERENCE_KEYS))
        changed = []
        for key, value in self.values.items():
            before = _stored(key, old.get(key))
            if before == value:
                continue
            changed.append(key)
            tx.audit(key, None, actor=self.actor, reason=_reason(key, value),
                     detail={"key": key, "old": _plain(key, before), "value": _plain(key, value)})
            _upsert(tx, key, value)
        if self.state is not None:
            _upsert(tx, STATE_KEY, self.state)
        written = changed + ([STATE_KEY] if self.state is not None else [])
        if written:
            tx.changed("project_meta", "updated", written)
        return changed


def _stored(key: str, raw: str | None) -> str:
    """A stored value in today's form (older files wrote auto_memory as a JSON boolean); defaults when unset."""
    if raw is None:
        return ProjectPrefs().preferences()[key]
    if key == "auto_memory":
        return "off" if str(raw).strip('"').lower() in ("off", "false") else "on"
    return str(raw)


def _plain(key: str, stored: str) -> Any:
    return stored if key == "auto_memory" else json.loads(stored)


class Preferences:
    """Read and change one project's preferences (reads on the caller's thread, writes through the writer)."""

    def __init__(self, db: Database) -> None:
        """``db``: the project's open database."""
        self.db = db

    def _raw(self, *keys: str) -> dict[str, str]:
        rows = self.db.reads.conn().execute(
            f"SELECT key, value FROM project_meta WHERE key IN ({','.join('?' * len(keys))})", keys).fetchall()
        return {str(k): str(v) for k, v in rows}

    def load(self) -> ProjectPrefs:
        """Everything, with defaults for what was never chosen (pool thread: a database read)."""
        rows = self._raw(*PREFERENCE_KEYS, STATE_KEY)
        values: dict[str, Any] = {}
        known = {f.name for f in fields(ProjectPrefs)} - set(PREFERENCE_KEYS)
        try:
            state = json.loads(rows.get(STATE_KEY) or "{}")
            values.update({k: v for k, v in state.items() if k in known})
            for key in PREFERENCE_KEYS:
                if key in rows:
                    values[key] = _plain(key, _stored(key, rows[key]))
        except ValueError:
            log.warning("ignoring unreadable project preferences")
        values["auto_memory"] = values.get("auto_memory", "on") == "on"
        prefs = ProjectPrefs(**values)
        if prefs.write_policy not in WRITE_POLICIES:
            prefs.write_policy = "confirm_each"
        if prefs.promotion_preset not in PRESET_NAMES:
            prefs.promotion_preset = promotion_preset(None).name
        prefs.trust_level = clamp_level(int(prefs.trust_level))
        return prefs

    def save(self, prefs: ProjectPrefs, *, actor: str = "user") -> Future[list[str]]:
        """Store preferences and counters; each preference that changed is audited. Raises ValidationError."""
        return self.db.writer.submit(SavePreferences(prefs, actor=actor))

    def save_counters(self, prefs: ProjectPrefs) -> Future[list[str]]:
        """Store only the counters and flags (after a session, a correction): never a preference."""
        stored = self.load()
        kept = replace(prefs, **{k: getattr(stored, k) for k in PREFERENCE_KEYS})
        return self.db.writer.submit(SavePreferences(kept, actor="engram"))

    def set(self, *, actor: str = "user", **changes: Any) -> list[str]:
        """Change some preferences (``trust_level=2``, ``auto_memory=False``...), audited; waits for the commit.

        Returns the keys that changed. Unknown keys or values raise ValidationError.
        """
        unknown = set(changes) - set(PREFERENCE_KEYS)
        if unknown:
            raise ValidationError(f"Unknown preference {sorted(unknown)[0]!r}.")
        prefs = replace(self.load(), **changes)
        changed: list[str] = self.db.writer.run(SavePreferences(prefs, actor=actor, counters=False))
        return changed

    # -- what other subsystems read -------------------------------------------------------
    def trust_level(self) -> int:
        """The trust level (Cautious when never chosen)."""
        raw = self._raw("trust_level").get("trust_level")
        try:
            return clamp_level(int(str(raw).strip('"'))) if raw is not None else DEFAULT_LEVEL
        except ValueError:
            return DEFAULT_LEVEL

    def injection_floor(self) -> float:
        """The confidence a memory needs to reach an agent at this project's trust level (every door
        that says memories to an agent reads it here)."""
        return injection_threshold(self.trust_level())

    def auto_memory(self) -> bool:
        """True unless the project opted out of automatic memory creation."""
        return _stored("auto_memory", self._raw("auto_memory").get("auto_memory")) == "on"

    def promotion_preset(self) -> PromotionPreset:
        """The promotion preset the trust settings chose (balanced when none was)."""
        return promotion_preset(self._raw("promotion_preset").get("promotion_preset"))
