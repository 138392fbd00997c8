"""The tables of migration ``0021_memory_triggers`` (kept beside the code that reads them).

``memory_triggers``: each memory's triggers, indexed by (kind, key) so a hook finds the few that
can fire for one tool call without reading every memory. Rows are derived from the memory
(``derive.triggers_of``) whenever it is added or edited, and rebuilt when the derivation changes.

``warning_outcomes``: every warning said at a tool call (before it, or right after a check passed),
and what followed in that session:
``warned`` until the session shows either the warned failure again (``repeated``) or ends
without it (``avoided``).

``hook_sessions``: what a hook must know of a running external session between its events: the
folder its shell was left in by a ``cd`` (Claude Code's Bash tool keeps one shell per session),
and (migration ``0024_hook_untested``) the first code file it changed since its last test edit
(``untested.py``).
"""

MEMORY_TRIGGERS = """
CREATE TABLE memory_triggers (
  memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  kind      TEXT NOT NULL,
  key       TEXT NOT NULL,
  spec      TEXT NOT NULL,
  PRIMARY KEY (memory_id, spec)
) WITHOUT ROWID;
CREATE INDEX idx_memory_triggers_key ON memory_triggers(kind, key);
CREATE TABLE warning_outcomes (
  id         INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  agent      TEXT NOT NULL,
  memory_id  INTEGER NOT NULL,
  warned_at  TEXT NOT NULL,
  call_id    TEXT NOT NULL DEFAULT '',
  call       TEXT NOT NULL DEFAULT '',
  outcome    TEXT NOT NULL DEFAULT 'warned',
  decided_at TEXT,
  UNIQUE (session_id, memory_id)
);
CREATE INDEX idx_warning_outcomes_outcome ON warning_outcomes(outcome, warned_at);
CREATE TABLE hook_sessions (
  session_id TEXT PRIMARY KEY,
  shell_cwd  TEXT NOT NULL DEFAULT '',
  updated_at TEXT NOT NULL
) WITHOUT ROWID;
"""

HOOK_UNTESTED = """
ALTER TABLE hook_sessions ADD COLUMN untested TEXT NOT NULL DEFAULT '';
"""
