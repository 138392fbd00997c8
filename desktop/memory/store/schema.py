"""The named migrations, in order: the store's own tables here, each subsystem's in its package.

Migrations are append-only: a released one is never edited, a change is a new
entry at the end of `MIGRATIONS`. Names, not numbers, identify them in the
ledger, so a database that has a name this build does not know was written by a
newer Engram and is refused.
"""

from __future__ import annotations

from desktop.memory.graph.schema import GRAPH, GRAPH_FILE_FACTS
from desktop.memory.observer.schema import (
    HOOK_JOURNAL,
    MEMORY_EVIDENCE,
    OBSERVER,
    OBSERVER_FILE_REMOVALS,
    OBSERVER_LEARNING,
    OBSERVER_SESSION_EVIDENCE,
    OBSERVER_SESSION_FILES,
)
from desktop.memory.team.local_schema import TEAM_SYNC
from desktop.memory.triggers.schema import HOOK_UNTESTED, MEMORY_TRIGGERS

CORE_MEMORIES = """
CREATE TABLE project_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE memories (
  id                     INTEGER PRIMARY KEY AUTOINCREMENT,
  type                   TEXT NOT NULL,
  content                TEXT NOT NULL,
  confidence             REAL NOT NULL DEFAULT 0.8,
  tags                   TEXT NOT NULL DEFAULT '[]',
  related_files          TEXT NOT NULL DEFAULT '[]',
  related_modules        TEXT NOT NULL DEFAULT '[]',
  scope                  TEXT NOT NULL DEFAULT 'global',
  source                 TEXT NOT NULL DEFAULT 'agent_explicit',
  session_id             TEXT,
  commit_sha             TEXT,
  provenance_session_ids TEXT NOT NULL DEFAULT '[]',
  provenance             TEXT NOT NULL DEFAULT '[]',
  relations              TEXT NOT NULL DEFAULT '[]',
  work_unit_ref          TEXT,
  methodology            TEXT,
  target_node_id         TEXT,
  impacted_node_ids      TEXT NOT NULL DEFAULT '[]',
  decay_half_life_days   REAL,
  needs_review           INTEGER NOT NULL DEFAULT 0,
  user_verified          INTEGER NOT NULL DEFAULT 0,
  citation_text          TEXT,
  pinned                 INTEGER NOT NULL DEFAULT 0,
  deprecated             INTEGER NOT NULL DEFAULT 0,
  deprecated_at          TEXT,
  deprecated_reason      TEXT,
  stale_at               TEXT,
  candidate              INTEGER NOT NULL DEFAULT 0,
  created_at             TEXT NOT NULL,
  updated_at             TEXT NOT NULL,
  last_accessed_at       TEXT NOT NULL,
  access_count           INTEGER NOT NULL DEFAULT 0,
  project_id             TEXT NOT NULL,
  trust_level_scope      TEXT NOT NULL DEFAULT 'personal',
  chunk_type             TEXT,
  chunk_start_line       INTEGER,
  chunk_end_line         INTEGER,
  context_prefix         TEXT,
  embedding_model_id     TEXT,
  fingerprint            TEXT NOT NULL,
  external_id            TEXT,
  code_anchors           TEXT NOT NULL DEFAULT '{}',
  metadata               TEXT NOT NULL DEFAULT '{}'
);

CREATE INDEX idx_memories_live_id       ON memories(deprecated, id);
CREATE INDEX idx_memories_type_live     ON memories(deprecated, type, id);
CREATE INDEX idx_memories_scope         ON memories(scope, id);
CREATE INDEX idx_memories_source        ON memories(source, id);
CREATE INDEX idx_memories_needs_review  ON memories(needs_review) WHERE needs_review = 1;
CREATE INDEX idx_memories_pinned        ON memories(pinned) WHERE pinned = 1;
CREATE INDEX idx_memories_confidence    ON memories(confidence DESC);
CREATE INDEX idx_memories_last_accessed ON memories(last_accessed_at DESC);
CREATE INDEX idx_memories_external_id   ON memories(external_id) WHERE external_id IS NOT NULL;
-- Fingerprint dedup: one live memory per normalised content.
CREATE UNIQUE INDEX idx_memories_fingerprint_live ON memories(fingerprint) WHERE deprecated = 0;

-- Side tables so "memories about this file/module" is an index lookup, not a
-- JSON scan of every row. Kept in sync by triggers.
CREATE TABLE memory_files (
  memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  file_path TEXT NOT NULL,
  PRIMARY KEY (file_path, memory_id)
) WITHOUT ROWID;
CREATE INDEX idx_memory_files_memory ON memory_files(memory_id);

CREATE TABLE memory_modules (
  memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  module    TEXT NOT NULL,
  PRIMARY KEY (module, memory_id)
) WITHOUT ROWID;
CREATE INDEX idx_memory_modules_memory ON memory_modules(memory_id);

-- Contentless FTS5: the index holds tokens, not a second copy of the text, and
-- contentless_delete lets a hard delete remove a row's tokens.
CREATE VIRTUAL TABLE memories_fts USING fts5(
  body, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, body)
    VALUES (new.id, engram_fts_text(new.content, new.tags, new.related_files));
  INSERT OR IGNORE INTO memory_files(memory_id, file_path)
    SELECT new.id, value FROM json_each(new.related_files);
  INSERT OR IGNORE INTO memory_modules(memory_id, module)
    SELECT new.id, value FROM json_each(new.related_modules);
END;

CREATE TRIGGER memories_au_text AFTER UPDATE OF content, tags, related_files ON memories BEGIN
  DELETE FROM memories_fts WHERE rowid = old.id;
  INSERT INTO memories_fts(rowid, body)
    VALUES (new.id, engram_fts_text(new.content, new.tags, new.related_files));
  DELETE FROM memory_files WHERE memory_id = old.id;
  INSERT OR IGNORE INTO memory_files(memory_id, file_path)
    SELECT new.id, value FROM json_each(new.related_files);
END;

CREATE TRIGGER memories_au_modules AFTER UPDATE OF related_modules ON memories BEGIN
  DELETE FROM memory_modules WHERE memory_id = old.id;
  INSERT OR IGNORE INTO memory_modules(memory_id, module)
    SELECT new.id, value FROM json_each(new.related_modules);
END;

CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
  DELETE FROM memories_fts WHERE rowid = old.id;
END;

-- Journal-first audit log: the entry is written before the mutation, in the
-- same transaction, so a change without its explanation cannot exist.
CREATE TABLE audit_log (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  at         TEXT NOT NULL,
  actor      TEXT NOT NULL,
  action     TEXT NOT NULL,
  memory_id  INTEGER,
  reason     TEXT,
  detail     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX idx_audit_memory ON audit_log(memory_id, id);
CREATE INDEX idx_audit_at ON audit_log(at);
"""

VECTORS = """
-- One vec0 table per (model, dims): vectors of different models live in
-- different tables and so can never be compared by mistake.
CREATE TABLE vector_spaces (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  model_id    TEXT NOT NULL,
  dims        INTEGER NOT NULL,
  table_name  TEXT NOT NULL UNIQUE,
  created_at  TEXT NOT NULL,
  active      INTEGER NOT NULL DEFAULT 0,
  UNIQUE (model_id, dims)
);

CREATE TABLE embedding_cache (
  key        TEXT PRIMARY KEY,
  embedding  BLOB NOT NULL,
  model_id   TEXT NOT NULL,
  dims       INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX idx_embedding_cache_expires ON embedding_cache(expires_at);

-- A model switch re-embeds in the background; its progress survives a restart.
CREATE TABLE embedding_jobs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  model_id     TEXT NOT NULL,
  dims         INTEGER NOT NULL,
  started_at   TEXT NOT NULL,
  finished_at  TEXT,
  last_memory_id INTEGER NOT NULL DEFAULT 0,
  done_count   INTEGER NOT NULL DEFAULT 0,
  total_count  INTEGER NOT NULL DEFAULT 0,
  state        TEXT NOT NULL DEFAULT 'running'
);
"""


# Raw facts the resolver needs about a file that the node table does not hold (its
# import statements, package): lets a later run or the watcher rebuild the symbol
# index from the database instead of re-parsing every unchanged file.

# Cross-session learning state of the observer (issue 5): which events were already
# learned from (idempotent re-import), searches, tool sequences, prompt-term to file
# associations for prefetch, and per-signal session counts for the frequency filter.

# Memory lifecycle (issue 8): uses since the last correction drive the access-count
# trust signal; an edit of the content is a correction and resets it (a trigger, so
# every writer gets it). Partial indexes keep the idle pruning pass set-based and fast.
LIFECYCLE = """
ALTER TABLE memories ADD COLUMN uses_since_correction INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER memories_au_correction AFTER UPDATE OF content ON memories
WHEN new.content IS NOT old.content BEGIN
  UPDATE memories SET uses_since_correction = 0 WHERE id = new.id;
END;

CREATE INDEX idx_memories_deprecated_at ON memories(deprecated_at) WHERE deprecated = 1;
CREATE INDEX idx_memories_candidate ON memories(candidate) WHERE candidate = 1;
CREATE INDEX idx_memories_anchored ON memories(id) WHERE code_anchors <> '{}' AND deprecated = 0;
"""

# Retrieval (issue 3): the session-neighbour lookup of the pipeline asks for the
# memory written just before/after another in the same session.
RETRIEVAL = """
CREATE INDEX idx_memories_session ON memories(session_id, id) WHERE session_id IS NOT NULL;
"""

# Restores look a record up by its birth time (idempotent re-import of an export,
# deprecated rows included, which the live-fingerprint index does not cover).
LIFECYCLE_CREATED_INDEX = """
CREATE INDEX idx_memories_created_at ON memories(created_at);
"""

# Observer (issue 5): which files each learned session touched, so prefetch can weigh
# them by how many sessions ago they were needed and read the last session's work state.

# Files an agent deleted (rm, git rm) or moved away: prefetch stops recommending them; a
# later touch clears the mark.

# Issue 13: the events each learned memory came from (the browser shows them as evidence).
# A side table rather than a JSON column: one memory gathers evidence from many sessions.

# Model synthesis (issue 13): each finished session's evidence (user messages, commands with
# their outcome, errors, edits, files) as JSON, kept only when a model is configured, so the
# periodic consolidation pass can check what a merged memory names against every session
# (``ended_at``: the session's own end, seconds since the epoch, so imports keep session order;
# ``synthesized``: 0 while the session may still grow, until its one synthesis call).

# Team memory (issue 18): what this machine shares with its team's PostgreSQL server.
# team_links maps a memory to its global id and the server version it last saw;
# team_share holds per-memory choices (shared / personal) over the per-type policy;
# team_outbox queues changes to push. Triggers fill the outbox so every door (service,
# lifecycle, observer, imports) is covered without each op knowing about teams; they
# only fire once the project joined a team. One pending row per memory: an edit moves
# its row to a new seq, so a push acknowledges exactly the seqs it read and an edit
# made meanwhile stays queued. A delete queues only the global id, never the text.

# Hooks in external agents (issue 16): what each Claude Code / Codex / Gemini CLI session was
# told, at which event, and whether the agent cited it or someone flagged it. No foreign key:
# the record of what an agent was shown outlives a memory that pruning later deletes.
EXTERNAL_INJECTIONS = """
CREATE TABLE external_injections (
  id         INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  agent      TEXT NOT NULL,
  event      TEXT NOT NULL,
  memory_id  INTEGER NOT NULL,
  at         TEXT NOT NULL,
  detail     TEXT NOT NULL DEFAULT '',
  cited      INTEGER NOT NULL DEFAULT 0,
  flagged    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_external_injections_session ON external_injections(session_id, memory_id);
CREATE INDEX idx_external_injections_at ON external_injections(at);
"""

# (name, sql). Append only.
# Indexing (issue 17): a code indexer inserting thousands of chunks indexes their FTS rows in
# one INSERT ... SELECT per batch instead of one per row from this trigger, and deletes them
# with one executemany. FTS5 flushes its pending terms at every statement savepoint, which a
# trigger's statement opens for each row: measured on the standard library's 15.5k chunks,
# 0.84 s of writer CPU per row against 0.29 s in bulk to insert, 0.83 s against 0.08 s to
# delete. engram_fts_deferred() is 1 only inside connection.fts_in_bulk()/delete_memories()
# on the writer thread, so every other write (agents, users, imports) goes through the
# triggers as before.
FTS_IN_BULK = """
DROP TRIGGER memories_ai;
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, body)
    SELECT new.id, engram_fts_text(new.content, new.tags, new.related_files) WHERE NOT engram_fts_deferred();
  INSERT OR IGNORE INTO memory_files(memory_id, file_path)
    SELECT new.id, value FROM json_each(new.related_files);
  INSERT OR IGNORE INTO memory_modules(memory_id, module)
    SELECT new.id, value FROM json_each(new.related_modules);
END;
DROP TRIGGER memories_ad;
CREATE TRIGGER memories_ad AFTER DELETE ON memories WHEN NOT engram_fts_deferred() BEGIN
  DELETE FROM memories_fts WHERE rowid = old.id;
END;
"""

# One session, one piece of evidence (issue 26): a resumed or continued transcript repeats the
# messages of the session it continues. Each session's user messages and tool calls leave a
# print (a hash of what identifies them: a tool call's id, a message's time and text); a new
# transcript whose prints are mostly known is the same session continued, and its learning is
# counted under the first one (observer_session_roots) instead of as another session.
# When the sessions that showed a lesson began (first_seen, last_seen) tells a newer recipe from one
# used in turn with the old (observer/supersede.py).
OBSERVER_EVENT_PRINTS = """
CREATE TABLE observer_event_prints (
  print      TEXT PRIMARY KEY,
  session_id TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX idx_event_prints_session ON observer_event_prints(session_id);
CREATE TABLE observer_session_roots (
  session_id TEXT PRIMARY KEY,
  root_id    TEXT NOT NULL,
  shared     INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
ALTER TABLE observer_signal_counts ADD COLUMN first_seen TEXT;
ALTER TABLE observer_signal_counts ADD COLUMN last_seen TEXT;
"""

MIGRATIONS: list[tuple[str, str]] = [
    ("0001_core_memories", CORE_MEMORIES),
    ("0002_vectors_and_embedding_cache", VECTORS),
    ("0003_observer", OBSERVER),
    ("0004_code_graph", GRAPH),
    ("0005_graph_file_facts", GRAPH_FILE_FACTS),
    ("0006_observer_learning", OBSERVER_LEARNING),
    ("0007_memory_lifecycle", LIFECYCLE),
    ("0008_retrieval_session_index", RETRIEVAL),
    ("0009_memory_created_index", LIFECYCLE_CREATED_INDEX),
    ("0010_observer_session_files", OBSERVER_SESSION_FILES),
    ("0011_observer_file_removals", OBSERVER_FILE_REMOVALS),
    ("0012_memory_evidence", MEMORY_EVIDENCE),
    ("0013_observer_session_evidence", OBSERVER_SESSION_EVIDENCE),
    ("0016_external_injections", EXTERNAL_INJECTIONS),
    ("0019_team_sync", TEAM_SYNC),
    ("0020_fts_in_bulk", FTS_IN_BULK),
    ("0021_memory_triggers", MEMORY_TRIGGERS),
    ("0022_observer_event_prints", OBSERVER_EVENT_PRINTS),
    ("0023_hook_journal", HOOK_JOURNAL),
    ("0024_hook_untested", HOOK_UNTESTED),
]
