"""The observer's tables (sessions, signals, scratchpad checkpoints, evidence): SQL of its named migrations.

Listed, in order with every other subsystem's, in ``desktop.memory.store.schema.MIGRATIONS``; a released
migration is never edited.
"""

from __future__ import annotations

OBSERVER = """
CREATE TABLE observer_file_nodes (
  file_path         TEXT PRIMARY KEY,
  project_id        TEXT NOT NULL,
  access_count      INTEGER NOT NULL DEFAULT 0,
  last_accessed_at  TEXT NOT NULL,
  session_count     INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE observer_co_access_edges (
  file_a              TEXT NOT NULL,
  file_b              TEXT NOT NULL,
  project_id          TEXT NOT NULL,
  weight              REAL NOT NULL DEFAULT 0.0,
  raw_count           INTEGER NOT NULL DEFAULT 0,
  session_count       INTEGER NOT NULL DEFAULT 0,
  avg_time_delta_ms   REAL,
  directional         INTEGER NOT NULL DEFAULT 0,
  task_type_breakdown TEXT NOT NULL DEFAULT '{}',
  last_observed_at    TEXT NOT NULL,
  promoted_at         TEXT,
  PRIMARY KEY (file_a, file_b, project_id)
);
CREATE INDEX idx_co_access_b ON observer_co_access_edges(file_b);
CREATE INDEX idx_co_access_weight ON observer_co_access_edges(weight DESC);

CREATE TABLE observer_error_patterns (
  id                TEXT PRIMARY KEY,
  project_id        TEXT NOT NULL,
  tool_name         TEXT NOT NULL,
  error_fingerprint TEXT NOT NULL,
  error_message     TEXT NOT NULL,
  occurrence_count  INTEGER NOT NULL DEFAULT 1,
  last_seen_at      TEXT NOT NULL,
  resolved_how      TEXT,
  sessions          TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX idx_error_patterns_fp ON observer_error_patterns(error_fingerprint);

CREATE TABLE observer_module_session_counts (
  module      TEXT NOT NULL,
  project_id  TEXT NOT NULL,
  count       INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (module, project_id)
);

CREATE TABLE observer_synthesis_log (
  module             TEXT NOT NULL,
  project_id         TEXT NOT NULL,
  trigger_count      INTEGER NOT NULL,
  synthesized_at     INTEGER NOT NULL,
  memories_generated INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (module, project_id, trigger_count)
);

-- Sessions seen (own agent and imported transcripts) with their A/B group and metrics.
CREATE TABLE session_metrics (
  session_id        TEXT PRIMARY KEY,
  agent             TEXT NOT NULL,
  started_at        TEXT,
  ended_at          TEXT,
  outcome           TEXT,
  ab_group          TEXT,
  session_type      TEXT,
  metrics           TEXT NOT NULL DEFAULT '{}'
);

-- Transcripts already imported, so re-importing never duplicates anything.
CREATE TABLE imported_transcripts (
  path        TEXT PRIMARY KEY,
  agent       TEXT NOT NULL,
  size        INTEGER NOT NULL,
  mtime       REAL NOT NULL,
  event_count INTEGER NOT NULL,
  imported_at TEXT NOT NULL,
  content_hash TEXT
);

-- Checkpointed scratchpads, restored after a crash.
CREATE TABLE scratchpad_checkpoints (
  session_id TEXT PRIMARY KEY,
  saved_at   TEXT NOT NULL,
  state      BLOB NOT NULL
);
"""

OBSERVER_LEARNING = """
ALTER TABLE observer_file_nodes ADD COLUMN read_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observer_file_nodes ADD COLUMN edit_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observer_file_nodes ADD COLUMN early_session_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observer_file_nodes ADD COLUMN module TEXT;
ALTER TABLE observer_error_patterns ADD COLUMN resolved_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE observer_error_patterns ADD COLUMN fix_files TEXT NOT NULL DEFAULT '[]';

CREATE TABLE observer_seen_events (
  event_key  TEXT PRIMARY KEY,
  session_id TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX idx_seen_events_session ON observer_seen_events(session_id);

CREATE TABLE observer_search_patterns (
  pattern        TEXT PRIMARY KEY,
  project_id     TEXT NOT NULL,
  count          INTEGER NOT NULL DEFAULT 0,
  session_count  INTEGER NOT NULL DEFAULT 0,
  last_seen_at   TEXT NOT NULL
);

CREATE TABLE observer_sequences (
  sequence       TEXT PRIMARY KEY,
  project_id     TEXT NOT NULL,
  session_count  INTEGER NOT NULL DEFAULT 0,
  success_count  INTEGER NOT NULL DEFAULT 0,
  last_seen_at   TEXT NOT NULL
);

CREATE TABLE observer_term_files (
  term           TEXT NOT NULL,
  file_path      TEXT NOT NULL,
  weight         REAL NOT NULL DEFAULT 0.0,
  session_count  INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (term, file_path)
) WITHOUT ROWID;

CREATE TABLE observer_signal_counts (
  signal_key     TEXT PRIMARY KEY,
  kind           TEXT NOT NULL,
  session_count  INTEGER NOT NULL DEFAULT 0,
  last_session   TEXT,
  memory_id      INTEGER
);
"""

OBSERVER_SESSION_FILES = """
CREATE TABLE observer_session_files (
  session_id TEXT NOT NULL,
  file_path  TEXT NOT NULL,
  edited     INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (session_id, file_path)
) WITHOUT ROWID;
"""

OBSERVER_FILE_REMOVALS = """
ALTER TABLE observer_file_nodes ADD COLUMN removed_at TEXT;
"""

MEMORY_EVIDENCE = """
CREATE TABLE memory_evidence (
  memory_id  INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  event_key  TEXT NOT NULL,
  session_id TEXT NOT NULL,
  signal     TEXT NOT NULL DEFAULT '',
  added_at   TEXT NOT NULL,
  PRIMARY KEY (memory_id, event_key)
) WITHOUT ROWID;
CREATE INDEX idx_memory_evidence_session ON memory_evidence(session_id);
"""

OBSERVER_SESSION_EVIDENCE = """
CREATE TABLE observer_session_evidence (
  session_id  TEXT PRIMARY KEY,
  ended_at    REAL NOT NULL,
  evidence    TEXT NOT NULL,
  synthesized INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
"""

#: Tool calls a hook process wrote down for the session's observer (``observer/journal``).
HOOK_JOURNAL = """
CREATE TABLE hook_journal (
  id         INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  agent      TEXT NOT NULL,
  root       TEXT NOT NULL,
  written_at TEXT NOT NULL,
  call       TEXT NOT NULL
);
CREATE INDEX idx_hook_journal_session ON hook_journal(session_id, id);
"""
