"""One spelling of "a live memory" (``store/live.py``): used by the queries that meant it, and it
excludes deprecated memories (and, for LIVE_MEMORY_SQL, code chunks) on a real database."""

from __future__ import annotations

import re
from pathlib import Path

from desktop.memory.store.database import Database
from desktop.memory.store.live import LIVE_MEMORY_SQL, LIVE_SQL, live, live_memory
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.writer import FnOp
from desktop.memory.trust import INJECTABLE_SQL

DESKTOP = Path(__file__).resolve().parents[2] / "desktop"
_HAND_WRITTEN = re.compile(r"deprecated\s*=\s*0\s+AND\s+(\w+\.)?type\s*<>\s*'code'")


def test_no_hand_written_live_memory_filter() -> None:
    offenders = [str(p.relative_to(DESKTOP)) for p in DESKTOP.rglob("*.py")
                 if p.name not in ("live.py", "schema.py") and _HAND_WRITTEN.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
    assert INJECTABLE_SQL.startswith(LIVE_SQL)


def test_live_filters_on_a_real_database(db: Database) -> None:
    from desktop.memory.service import MemoryService

    mem = MemoryService(db)
    keep = mem.add(NewMemory(content="Amounts are integer cents", type="decision")).result(10).id
    gone = mem.add(NewMemory(content="Amounts are floats", type="decision")).result(10).id
    code = mem.add(NewMemory(content="def charge(): ...", type="code")).result(10).id

    def deprecate(tx: object) -> None:
        tx.execute("UPDATE memories SET deprecated = 1 WHERE id = ?", (gone,))  # type: ignore[attr-defined]
    db.writer.run(FnOp("deprecate_for_test", deprecate))
    conn = db.reads.conn()
    ids = lambda where: {r[0] for r in conn.execute(f"SELECT m.id FROM memories m WHERE {where}")}  # noqa: E731
    assert ids(LIVE_SQL) == ids(live("m")) == {keep, code}
    assert ids(LIVE_MEMORY_SQL) == ids(live_memory("m")) == {keep}
