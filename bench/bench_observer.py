"""Observer speed: observe() latency, session finalisation, importing every shared transcript.

Targets (issue 5): observe() p99 <= 0.5 ms per event; finalisation without an LLM
<= 100 ms for 1,000 events; importing everything in ../shared/data/transcripts/
<= 30 s. Finalisation is measured as Observer.finalize + the promotion filters
+ the single write transaction (novelty with the hashing embedder); the bundled
MiniLM's embedding time is reported on its own line when the model is present.

Run: .venv/bin/python bench/bench_observer.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bookminder_parser import parse_all  # noqa: E402
from desktop.memory.observer.ingest import Ingestor  # noqa: E402
from desktop.memory.observer.novelty import HashingEmbedder, Novelty  # noqa: E402
from desktop.memory.observer.observer import Observer  # noqa: E402
from desktop.memory.observer.promotion import Promoter  # noqa: E402
from desktop.memory.observer.sniff import import_any  # noqa: E402
from desktop.memory.store.database import Database  # noqa: E402

DATA = ROOT / ".." / "shared" / "data" / "transcripts"


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))]


def _all_events() -> list:
    events = []
    for path in sorted((DATA / "claude-code").rglob("*.jsonl")):
        if "subagents" not in path.parts:
            events.extend(import_any(path).events)
    for s in parse_all(DATA / "bookminder"):
        events.extend(s.events)
    return events


def bench_observe(events: list) -> dict:
    """Per-event latency over every real event."""
    observers: dict[str, Observer] = {}
    times = []
    for ev in events:
        obs = observers.get(ev.session_id)
        if obs is None:
            obs = observers[ev.session_id] = Observer(ev.session_id)
        t = time.perf_counter()
        obs.observe(ev)
        times.append((time.perf_counter() - t) * 1000)
    return {"events": len(times), "p50": _pct(times, 0.5), "p99": _pct(times, 0.99), "max": max(times),
            "mean": statistics.fmean(times)}


def bench_finalize(events: list, db: Database) -> dict:
    """Finalize + promote sessions cut to 1,000 events each."""
    chunks, cur, sid = [], [], None
    for ev in events:
        if ev.session_id != sid:
            if len(cur) >= 1000:
                chunks.append(cur[:1000])
            cur, sid = [], ev.session_id
        cur.append(ev)
    promoter = Promoter(db, novelty=Novelty(HashingEmbedder()))
    fin, total = [], []
    for chunk in chunks[:8]:
        obs = Observer(chunk[0].session_id)
        for ev in chunk:
            obs.observe(ev)
        t = time.perf_counter()
        digest = obs.finalize()
        t1 = time.perf_counter()
        promoter.promote(digest)
        t2 = time.perf_counter()
        fin.append((t1 - t) * 1000)
        total.append((t2 - t) * 1000)
    return {"sessions": len(fin), "finalize_p50": _pct(fin, 0.5), "total_p50": _pct(total, 0.5),
            "total_max": max(total) if total else 0.0}


def bench_minilm() -> float | None:
    """Time of one novelty batch (20 candidates + 200 existing texts) with the bundled MiniLM."""
    try:
        from desktop.memory.embedding.local import LocalMiniLMProvider
        provider = LocalMiniLMProvider()
        if not provider.available():
            return None
        provider.embed(["warm up"])
        texts = [f"`src/mod{i}.py` and `src/other{i}.py` are usually worked on together." for i in range(220)]
        t = time.perf_counter()
        Novelty(provider).match(texts[:20], list(enumerate(texts[20:])))
        return (time.perf_counter() - t) * 1000
    except Exception:
        return None


def bench_import_all(tmp: Path) -> dict:
    """Import every transcript (Claude Code files via ingest, BookMinder via its parser) into a fresh DB."""
    db = Database(tmp / "import.db").open()
    ing = Ingestor(db, Promoter(db, novelty=Novelty(HashingEmbedder())))
    t = time.perf_counter()
    files = [p for p in sorted((DATA / "claude-code").rglob("*.jsonl")) if "subagents" not in p.parts]
    for path in files:
        ing.ingest_file(path)
    sessions = parse_all(DATA / "bookminder")
    for s in sessions:
        ing.learn_events(s.events)
    elapsed = time.perf_counter() - t
    mems = db.reads.conn().execute("SELECT count(*) FROM memories").fetchall()[0][0]
    db.close()
    return {"files": len(files), "sessions": len(sessions), "seconds": elapsed, "memories": mems}


def main() -> None:
    """Print the Markdown table."""
    if not DATA.is_dir():
        print(f"transcripts not found at {DATA}; skipped.")
        return
    events = _all_events()
    obs = bench_observe(events)
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "fin.db").open()
        fin = bench_finalize(events, db)
        db.close()
        imp = bench_import_all(Path(tmp))
    minilm = bench_minilm()
    print("### Observer speed\n")
    print("| measure | result | target | met |\n|---|---|---|---|")
    print(f"| observe() p99 over {obs['events']} real events | {obs['p99']:.3f} ms (p50 {obs['p50']:.3f}, "
          f"max {obs['max']:.2f}) | <= 0.5 ms | {'yes' if obs['p99'] <= 0.5 else 'NO'} |")
    print(f"| finalize + promote (1,000-event session, no LLM), p50 of {fin['sessions']} | "
          f"{fin['total_p50']:.1f} ms (finalize alone {fin['finalize_p50']:.2f} ms, max {fin['total_max']:.1f}) "
          f"| <= 100 ms | {'yes' if fin['total_p50'] <= 100 else 'NO'} |")
    print(f"| import all of ../shared/data/transcripts ({imp['files']} Claude Code files + {imp['sessions']} "
          f"BookMinder sessions) | {imp['seconds']:.1f} s "
          f"({imp['memories']} memories) | <= 30 s | {'yes' if imp['seconds'] <= 30 else 'NO'} |")
    if minilm is not None:
        print(f"| novelty batch with bundled MiniLM (220 texts, not cached) | {minilm:.0f} ms | (info) | |")


if __name__ == "__main__":
    main()
