"""Anchoring memories written before upkeep ran.

Conflict checks and anchoring on write start whenever any door opens a project
(``Project.start_upkeep``), and closing the project drains them, so a one-shot CLI
command gets the same treatment as the app. What was written before that gets its
anchors here, when ``engram check-stale`` or the app's idle work asks.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from desktop.memory.lifecycle.anchoring import SetAnchors
from desktop.memory.lifecycle.staleness import compute_anchors, head_commit
from desktop.memory.store.live import LIVE_MEMORY_SQL

log = logging.getLogger("engram.lifecycle")


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

