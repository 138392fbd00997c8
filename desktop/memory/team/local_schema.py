"""Team sync's local tables (the outbox its triggers fill, links, state): SQL of its named migration.

The server's own schema is ``server_schema.py``. Listed, in order with every other subsystem's, in
``desktop.memory.store.schema.MIGRATIONS``; a released migration is never edited.
"""

from __future__ import annotations

TEAM_SYNC = """
CREATE TABLE team_state (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE team_links (
  memory_id  INTEGER PRIMARY KEY,
  gid        TEXT NOT NULL UNIQUE,
  version    INTEGER NOT NULL DEFAULT 0,
  origin     TEXT NOT NULL DEFAULT 'local',
  created_by TEXT,
  updated_by TEXT,
  base_fp    TEXT  -- fingerprint of the text as of `version`: tells a flag-only change from an edit
);

CREATE TABLE team_share (
  memory_id INTEGER PRIMARY KEY,
  shared    INTEGER NOT NULL
);

CREATE TABLE team_outbox (
  seq       INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_id INTEGER NOT NULL,
  gid       TEXT,
  op        TEXT NOT NULL,
  queued_at TEXT NOT NULL
);
CREATE INDEX idx_team_outbox_memory ON team_outbox(memory_id);

CREATE TRIGGER team_outbox_ai AFTER INSERT ON memories
WHEN EXISTS (SELECT 1 FROM team_state WHERE key = 'team_id') BEGIN
  INSERT INTO team_outbox(memory_id, op, queued_at)
  VALUES (new.id, 'upsert', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

CREATE TRIGGER team_outbox_au AFTER UPDATE OF content, type, tags, related_files, related_modules,
  citation_text, pinned, deprecated, user_verified, scope, candidate ON memories
WHEN EXISTS (SELECT 1 FROM team_state WHERE key = 'team_id') BEGIN
  DELETE FROM team_outbox WHERE memory_id = new.id AND op = 'upsert';
  INSERT INTO team_outbox(memory_id, op, queued_at)
  VALUES (new.id, 'upsert', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

CREATE TRIGGER team_outbox_ad AFTER DELETE ON memories BEGIN
  DELETE FROM team_outbox WHERE memory_id = old.id AND op = 'upsert';
  INSERT INTO team_outbox(memory_id, gid, op, queued_at)
  SELECT old.id, gid, 'delete', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM team_links
  WHERE memory_id = old.id AND EXISTS (SELECT 1 FROM team_state WHERE key = 'team_id');
  DELETE FROM team_links WHERE memory_id = old.id;
  DELETE FROM team_share WHERE memory_id = old.id;
END;
"""
