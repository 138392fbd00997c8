"""The code graph's tables (files, nodes, edges, closure): SQL of its named migrations.

Listed, in order with every other subsystem's, in ``desktop.memory.store.schema.MIGRATIONS``; a released
migration is never edited.
"""

from __future__ import annotations

GRAPH = """
CREATE TABLE graph_nodes (
  id              TEXT PRIMARY KEY,
  project_id      TEXT NOT NULL,
  type            TEXT NOT NULL,
  label           TEXT NOT NULL,
  file_path       TEXT,
  language        TEXT,
  start_line      INTEGER,
  end_line        INTEGER,
  layer           INTEGER NOT NULL DEFAULT 1,
  source          TEXT NOT NULL DEFAULT 'ast',
  confidence      TEXT NOT NULL DEFAULT 'inferred',
  metadata        TEXT NOT NULL DEFAULT '{}',
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  stale_at        INTEGER,
  associated_memory_ids TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX idx_gn_type  ON graph_nodes(type);
CREATE INDEX idx_gn_label ON graph_nodes(label);
CREATE INDEX idx_gn_file  ON graph_nodes(file_path) WHERE file_path IS NOT NULL;

CREATE TABLE graph_edges (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id  TEXT NOT NULL,
  from_id     TEXT NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
  to_id       TEXT NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
  type        TEXT NOT NULL,
  layer       INTEGER NOT NULL DEFAULT 1,
  weight      REAL NOT NULL DEFAULT 1.0,
  source      TEXT NOT NULL DEFAULT 'ast',
  confidence  REAL NOT NULL DEFAULT 1.0,
  metadata    TEXT NOT NULL DEFAULT '{}',
  origin_file TEXT,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  stale_at    INTEGER
);
CREATE INDEX idx_ge_from ON graph_edges(from_id, type) WHERE stale_at IS NULL;
CREATE INDEX idx_ge_to   ON graph_edges(to_id, type)   WHERE stale_at IS NULL;
CREATE INDEX idx_ge_origin ON graph_edges(origin_file);
CREATE INDEX idx_ge_stale ON graph_edges(stale_at) WHERE stale_at IS NOT NULL;

CREATE TABLE graph_closure (
  ancestor_id   TEXT NOT NULL,
  descendant_id TEXT NOT NULL,
  depth         INTEGER NOT NULL,
  path          TEXT NOT NULL,
  edge_types    TEXT NOT NULL,
  total_weight  REAL NOT NULL,
  PRIMARY KEY (ancestor_id, descendant_id)
) WITHOUT ROWID;
CREATE INDEX idx_gc_descendant ON graph_closure(descendant_id, depth);

CREATE TABLE graph_index_state (
  project_id       TEXT PRIMARY KEY,
  last_indexed_at  INTEGER NOT NULL,
  last_commit_sha  TEXT,
  node_count       INTEGER NOT NULL DEFAULT 0,
  edge_count       INTEGER NOT NULL DEFAULT 0,
  stale_edge_count INTEGER NOT NULL DEFAULT 0,
  index_version    INTEGER NOT NULL DEFAULT 1
);

-- Per-file state of the live indexer: content hash lets later runs skip unchanged files.
CREATE TABLE graph_files (
  file_path    TEXT PRIMARY KEY,
  content_hash TEXT NOT NULL,
  size         INTEGER NOT NULL,
  mtime        REAL NOT NULL,
  language     TEXT,
  module       TEXT,
  indexed_at   INTEGER NOT NULL,
  status       TEXT NOT NULL DEFAULT 'ok',
  skip_reason  TEXT
);
CREATE INDEX idx_graph_files_module ON graph_files(module);
"""

GRAPH_FILE_FACTS = """
ALTER TABLE graph_files ADD COLUMN facts TEXT;
"""
