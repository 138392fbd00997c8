"""Issue 8 benchmark: pruning+decay pass, git staleness check, export/import at 100,000 memories.

Run: .venv/bin/python bench/bench_lifecycle.py [--memories 100000] [--files 500]
Prints Markdown tables (for bench/RESULTS.md) and a JSON line with the raw numbers.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import subprocess
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from common import table

from desktop.memory.lifecycle.formats import export_markdown
from desktop.memory.lifecycle.portable import export_json, import_json
from desktop.memory.lifecycle.pruning import PruneConfig, PruneOp
from desktop.memory.lifecycle.staleness import check_staleness, compute_anchors, head_commit
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.rows import fingerprint
from desktop.memory.store.writer import FnOp, Tx, iso
from desktop.memory.types import DEFAULT_HALF_LIFE_DAYS

NOW = datetime(2025, 6, 1, tzinfo=UTC)
WORDS = [
    "parser", "cache", "session", "token", "database", "migration", "handler", "request", "router",
    "config", "build", "test", "lint", "deploy", "docker", "schema", "index", "query", "widget",
    "thread", "writer", "reader", "import", "export", "graph", "module", "file", "retry", "timeout",
    "error", "logging", "metrics", "auth", "password", "hash", "queue", "worker", "signal", "commit",
    "branch"
]
TYPES = ["gotcha", "decision", "preference", "pattern", "error_pattern", "module_insight", "work_state",
         "dead_end", "workflow_recipe", "note", "prefetch_pattern", "causal_dependency"]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + f" (#{rng.randrange(10**9)})."


def fill(db: Database, n: int, seed: int = 8) -> None:
    """n memories with a realistic spread of age, use, flags and deprecation, inserted in bulk."""
    rng = random.Random(seed)

    def rows(lo: int, hi: int) -> list[tuple[object, ...]]:
        out = []
        for i in range(lo, hi):
            mtype = TYPES[i % len(TYPES)]
            content = _sentence(rng, rng.randint(8, 30))
            created = NOW - timedelta(days=rng.uniform(0, 400))
            accessed = created + (NOW - created) * rng.random() ** 2
            deprecated = rng.random() < 0.05
            out.append((mtype, content, round(rng.uniform(0.3, 0.95), 3), json.dumps([rng.choice(WORDS)]),
                        json.dumps([f"src/{rng.choice(WORDS)}.py"]), DEFAULT_HALF_LIFE_DAYS.get(mtype),
                        int(rng.random() < 0.02), int(rng.random() < 0.05), int(rng.random() < 0.05),
                        int(deprecated), iso(accessed) if deprecated else None, iso(created), iso(created),
                        iso(accessed), rng.randint(0, 12), fingerprint(content) + f"{i:x}"))
        return out

    def insert(lo: int, hi: int) -> FnOp[None]:
        def write(tx: Tx) -> None:
            tx.conn.executemany(
                "INSERT INTO memories(type, content, confidence, tags, related_files, decay_half_life_days, "
                "pinned, user_verified, candidate, deprecated, deprecated_at, created_at, updated_at, "
                "last_accessed_at, access_count, fingerprint, project_id) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,'bench')", rows(lo, hi))
        return FnOp("bench_fill", write)
    for lo in range(0, n, 10_000):
        db.writer.run(insert(lo, min(n, lo + 10_000)), 600)


def bench_prune(tmp: Path, n: int) -> list[list[object]]:
    """Dry run, the first real pass (much to do) and a steady-state pass, over n memories."""
    out: list[list[object]] = []
    with Database(tmp / "prune.db", clock=lambda: NOW) as db:
        fill(db, n)
        cfg = PruneConfig(soft_limit=int(n * 0.5))
        for label, op in (("dry run", PruneOp(cfg, now=NOW, dry_run=True)), ("first pass", PruneOp(cfg, now=NOW)),
                          ("next day", PruneOp(cfg, now=NOW + timedelta(days=1)))):
            t = time.perf_counter()
            rep = db.writer.run(op, 600)
            wall = time.perf_counter() - t
            out.append([label, n, rep.decayed, rep.expired + rep.quarantine_expired, rep.evicted,
                         rep.hard_deleted, round(wall, 3), "yes" if wall <= 2.0 else "NO"])
    return out


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def bench_staleness(tmp: Path, files: int, total: int) -> list[list[object]]:
    """`total` tracked files each anchored by one memory (plus a line-range one); `files` of them change."""
    repo = tmp / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "b@b")
    _git(repo, "config", "user.name", "bench")
    rng = random.Random(5)
    for i in range(total):
        (repo / f"m{i // 100}").mkdir(exist_ok=True)
        (repo / f"m{i // 100}" / f"f{i}.py").write_text(
            "".join(f"def fn_{i}_{k}(x):\n    return x + {k}\n" for k in range(60)))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    head = head_commit(repo)
    with Database(tmp / "stale.db") as db:
        svc = MemoryService(db)
        items = []
        for i in range(total):
            path = f"m{i // 100}/f{i}.py"
            items.append(NewMemory(content=f"memory about {path}", related_files=[path], commit_sha=head,
                                   code_anchors=compute_anchors(repo, [path])))
            items.append(NewMemory(content=f"chunk memory about {path}", related_files=[path], commit_sha=head,
                                   code_anchors=compute_anchors(repo, [f"{path}#L10-30"])))
        for k in range(0, len(items), 2000):
            svc.add_many(items[k:k + 2000]).result()
        changed = rng.sample(range(total), files)
        for i in changed:
            p = repo / f"m{i // 100}" / f"f{i}.py"
            lines = p.read_text().splitlines(keepends=True)
            for k in rng.sample(range(len(lines)), rng.randint(1, 40)):
                lines[k] = f"    # edited {k}\n"
            p.write_text("".join(lines))
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", "change")
        t = time.perf_counter()
        rep = check_staleness(db, repo)
        wall = time.perf_counter() - t
    return [[total, total * 2, files, rep.files_hashed, len(rep.changed), round(wall, 3),
             "yes" if wall <= 5.0 else "NO"]]


def bench_portability(tmp: Path, n: int) -> list[list[object]]:
    """Export n memories as JSON and Markdown; restore the JSON into an empty database."""
    out: list[list[object]] = []
    with Database(tmp / "port.db") as db:
        fill(db, n, seed=11)
        svc = MemoryService(db)
        t = time.perf_counter()
        buf = io.StringIO()
        count = export_json(svc, buf)
        wall = time.perf_counter() - t
        src = tmp / "export.json"
        src.write_text(buf.getvalue(), encoding="utf-8")
        out.append(["export JSON", count, f"{src.stat().st_size / 1e6:.1f} MB", round(wall, 2),
                    "yes" if wall <= 30 else "NO"])
        t = time.perf_counter()
        md = export_markdown(db)
        wall = time.perf_counter() - t
        out.append(["export Markdown", md.count("<!-- engram "), f"{len(md.encode()) / 1e6:.1f} MB",
                    round(wall, 2), "yes" if wall <= 30 else "NO"])
    with Database(tmp / "restored.db") as target:
        t = time.perf_counter()
        rep = import_json(MemoryService(target), src)
        wall = time.perf_counter() - t
        out.append(["import JSON (restore)", rep.added, f"{len(rep.rejected)} rejected", round(wall, 2),
                    "yes" if wall <= 30 else "NO"])
    return out


def main() -> None:
    """Run every benchmark and print the tables."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--tracked", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        prune = bench_prune(tmp, args.memories)
        stale = bench_staleness(tmp, args.files, args.tracked)
        port = bench_portability(tmp, args.memories)
    print("### Pruning and decay pass (one WriteOp, set-based)\n")
    print(table(["pass", "memories", "decayed", "expired (TTL+quarantine)", "evicted", "hard-deleted",
                 "seconds", "<= 2 s"], prune))
    print("\n### Staleness check after a git change\n")
    print(table(["tracked files", "anchored memories", "files changed", "files hashed", "memories flagged",
                 "seconds", "<= 5 s"], stale))
    print("\n### Export and import\n")
    print(table(["operation", "memories", "size", "seconds", "<= 30 s"], port))
    print("\n" + json.dumps({"prune": prune, "staleness": stale, "portability": port}))


if __name__ == "__main__":
    main()
