"""Upkeep every process gets: conflict checks and code anchoring on write, a live code graph.

Before, only the app started these (as GUI-side watchers), so memories written by
the CLI, the MCP server or ``engram run`` were never checked or anchored. Now the
composition root starts :func:`start_maintenance` whenever any door opens a project,
and closing the project drains the watchers, so a one-shot CLI command gets the
same treatment as the app. :func:`keep_graph_live` is the other half: the app on
opening a project and ``engram mcp``/``engram serve`` at start-up bring the code
graph up to date incrementally and then watch it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from desktop.memory.lifecycle.anchoring import AnchorWatcher, SetAnchors
from desktop.memory.lifecycle.conflict_store import lifecycle_for
from desktop.memory.lifecycle.staleness import compute_anchors, head_commit
from desktop.memory.store.live import LIVE_MEMORY_SQL

log = logging.getLogger("engram.lifecycle")

#: Keys in ``ProjectServices.extras``; inserted first so they close last (after every
#: service that may still write has flushed).
CONFLICTS, ANCHORS, GRAPH = "lifecycle", "anchors", "graph"


def start_maintenance(project: Any) -> dict[str, Any]:
    """Start conflict detection and anchoring on write for ``project`` (idempotent)."""
    started: dict[str, Any] = {CONFLICTS: lifecycle_for(project)}
    watcher = project.extras.get(ANCHORS)
    if watcher is None:
        watcher = AnchorWatcher(project.db, project.info.root).start()
        project.extras[ANCHORS] = watcher
    started[ANCHORS] = watcher
    return started


def anchor_unanchored(db: Any, root: Path | str, *, limit: int = 5000) -> int:
    """Anchor live memories that name files but have no anchors yet (written before upkeep ran).

    Returns how many were anchored; waits for the commit. ``engram check-stale`` and the
    app's idle work call it so staleness covers older memories too.
    """
    rows = db.reads.conn().execute(
        f"SELECT id, related_files FROM memories WHERE {LIVE_MEMORY_SQL} "
        "AND source <> 'code_index' AND code_anchors = '{}' AND related_files <> '[]' LIMIT ?",
        (limit,)).fetchall()
    base = Path(root)
    anchors = {int(mid): found for mid, files in rows if (found := compute_anchors(base, json.loads(files)))}
    if not anchors:
        return 0
    return int(db.writer.run(SetAnchors(anchors, head_commit(base)), 60))


def keep_graph_live(project: Any, **options: Any) -> Any:
    """Bring the project's code graph up to date (unchanged files are skipped) and watch it.

    Runs in the background and returns the GraphService at once; closing the project
    stops the watcher and any running index.
    """
    from desktop.memory.graph.service import build_graph_service

    graph = build_graph_service(project, **options)
    graph.start(watch=True)
    return graph
