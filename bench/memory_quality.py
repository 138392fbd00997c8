"""What Engram learns from every shared transcript, dumped for hand labelling, and the labelled table.

Two commands, each a single run:

    .venv/bin/python bench/memory_quality.py learn TAG     # learn, write bench/memory_quality/TAG.jsonl
    .venv/bin/python bench/memory_quality.py report TAG    # precision / noise per type from the labels

``learn`` replays the BookMinder terminal logs (through bench/bookminder_parser.py,
session by session, as bench_learning.py does) into one throw-away project
database, and ingests each Claude Code project's JSONL transcripts (the code path
of ``engram ingest``: Ingestor.ingest_file with the lifecycle-gated promoter) into
one database per project. Every live memory is dumped with a stable key (project,
type and text hashed), so labels survive a re-run.

``report`` joins the dump with bench/memory_quality/labels.tsv (key, label, note;
labels: useful / weak / noise, rubric in bench/memory_quality/RUBRIC.md) and with
bench/memory_quality/facts.tsv (the BookMinder facts written down before labelling,
and the keys of memories stating each). Unlabelled memories are reported as such,
never guessed.

``--days A-B`` restricts BookMinder to those days (cross-validation of thresholds).
Novelty uses the bundled MiniLM model, as the app's observer does; ``--hashing`` uses the
hashing fallback the app falls back to when no model loads.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bookminder_parser import parse_all  # noqa: E402
from bench.common import SHARED  # noqa: E402
from desktop.composition import novelty_embedder  # noqa: E402
from desktop.memory.lifecycle.control import gated_promoter  # noqa: E402
from desktop.memory.observer.ingest import Ingestor  # noqa: E402
from desktop.memory.observer.novelty import HashingEmbedder, Novelty  # noqa: E402
from desktop.memory.store.database import Database  # noqa: E402
from desktop.settings import Settings  # noqa: E402

OUT = ROOT / "bench" / "memory_quality"
TRANSCRIPTS = SHARED / "transcripts"
LABELS = ("useful", "weak", "noise")
LESSONS = frozenset({"user_rule", "command_fix", "recipe", "error_fix", "stated_cause", "hook_block"})
SYNTHESIS = frozenset({"co_access", "prefetch_pattern", "weekly_synthesis", "workflow_recipe", "module_synthesis"})


def memory_key(project: str, mtype: str, content: str) -> str:
    """A stable id for one memory text of one project (labels are keyed by it)."""
    return hashlib.sha1(f"{project}|{mtype}|{content}".encode()).hexdigest()[:12]


_EMBEDDER: list[Any] = []  # chosen once per run by main() (loading the model takes seconds)


def _open(tmp: Path, name: str) -> tuple[Database, Ingestor]:
    db = Database(tmp / f"{name}.db").open()
    return db, Ingestor(db, gated_promoter(db, novelty=Novelty(_EMBEDDER[0])))


def _dump(db: Database, project: str) -> list[dict[str, Any]]:
    rows = db.reads.conn().execute(
        "SELECT id, type, content, related_files, confidence, candidate, needs_review, metadata, stale_at,"
        " provenance_session_ids FROM memories WHERE deprecated = 0 ORDER BY id").fetchall()
    out = []
    for mid, mtype, content, files, conf, cand, review, meta, stale, sessions in rows:
        md = json.loads(meta or "{}")
        out.append({"key": memory_key(project, mtype, content), "project": project, "id": int(mid),
                    "type": mtype, "content": content, "files": json.loads(files or "[]"),
                    "confidence": round(float(conf), 3), "candidate": bool(cand), "needs_review": bool(review),
                    "stale": bool(stale), "signal": md.get("signal", ""), "sessions": md.get("sessions", 0),
                    "session_ids": json.loads(sessions or "[]")})
    return out


def learn(days: tuple[int, int] | None = None) -> list[dict[str, Any]]:
    """Learn from all shared transcripts (or BookMinder days only) and return every live memory."""
    tmp = Path(tempfile.mkdtemp(prefix="engram-memory-quality-"))
    out: list[dict[str, Any]] = []
    db, ing = _open(tmp, "bookminder")
    for s in parse_all(TRANSCRIPTS / "bookminder"):
        if days is None or days[0] <= s.day <= days[1]:
            ing.learn_events(s.events)
    out += _dump(db, "bookminder")
    db.close()
    if days is not None:
        return out
    cc = TRANSCRIPTS / "claude-code"
    projects = {"synapse": [cc / "synapse-070001ad.jsonl"],
                "gemini-cli-project": sorted((cc / "gemini-cli-project").rglob("*.jsonl"))}
    for name, files in projects.items():
        db, ing = _open(tmp, name)
        for f in files:
            ing.ingest_file(f)
        out += _dump(db, name)
        db.close()
    return out


def load_labels() -> dict[str, str]:
    """key -> label from labels.tsv (comment lines start with #)."""
    labels: dict[str, str] = {}
    path = OUT / "labels.tsv"
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                parts = line.split("\t")
                if len(parts) >= 2 and parts[1] in LABELS:
                    labels[parts[0]] = parts[1]
    return labels


def load_facts() -> list[tuple[str, set[str]]]:
    """(fact, keys of memories that state it) from facts.tsv."""
    facts = []
    for line in (OUT / "facts.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            parts = line.split("\t")
            facts.append((parts[0], {k for k in (parts[1].split(",") if len(parts) > 1 else []) if k}))
    return facts


def report(tag: str) -> str:
    """The Markdown table of one labelled dump."""
    mems = [json.loads(ln) for ln in (OUT / f"{tag}.jsonl").read_text(encoding="utf-8").splitlines() if ln]
    labels = load_labels()
    by_type: dict[str, Counter[str]] = defaultdict(Counter)
    by_project: dict[str, Counter[str]] = defaultdict(Counter)
    for m in mems:
        lab = labels.get(m["key"], "unlabelled")
        by_type[m["type"]][lab] += 1
        by_project[m["project"]][lab] += 1
    lines = [f"memories: {len(mems)} (`{tag}.jsonl`)\n",
             "| memory type | n | useful | weak | noise | unlabelled | precision | noise share |",
             "|---|---|---|---|---|---|---|---|"]

    def row(name: str, c: Counter[str]) -> str:
        n = sum(c.values())
        return (f"| {name} | {n} | {c['useful']} | {c['weak']} | {c['noise']} | {c['unlabelled']} | "
                f"{c['useful'] / n:.2f} | {c['noise'] / n:.0%} |" if n else f"| {name} | 0 |")
    for t in sorted(by_type):
        lines.append(row(t, by_type[t]))
    total: Counter[str] = Counter()
    for c in by_type.values():
        total.update(c)
    lines.append(row("**all**", total))
    lines += ["", "| subset | n | useful | weak | noise | unlabelled | precision | noise share |",
              "|---|---|---|---|---|---|---|---|"]
    for p in sorted(by_project):
        lines.append(row(f"project {p}", by_project[p]))
    subsets = {
        "injectable (not candidate, not stale)": [m for m in mems if not m["candidate"] and not m["stale"]],
        "candidates": [m for m in mems if m["candidate"]],
        "stale (retired by a rename or deletion)": [m for m in mems if m["stale"]],
        f"from session lessons ({', '.join(sorted(LESSONS))})":
            [m for m in mems if m["signal"] in LESSONS],
        "from module/weekly synthesis (synthesis.py)": [m for m in mems if m["signal"] in SYNTHESIS],
    }
    for name, ms in subsets.items():
        lines.append(row(name, Counter(labels.get(m["key"], "unlabelled") for m in ms)))
    for sig in sorted(LESSONS):
        ms = [m for m in mems if m["signal"] == sig]
        if ms:
            lines.append(row(f"lesson kind `{sig}`", Counter(labels.get(m["key"], "unlabelled") for m in ms)))
    keys = {m["key"] for m in mems}
    if (OUT / "facts.tsv").exists():
        facts = load_facts()
        stated = [(f, ks & keys) for f, ks in facts]
        lines += ["", f"BookMinder facts stated by some memory: {sum(1 for _, k in stated if k)}/{len(facts)}"]
        lines += [f"- [{'x' if k else ' '}] {f}" for f, k in stated]
    return "\n".join(lines)


RULE_WORDS_GRID = (0, 4, 5, 6, 8, 10, 12)


def _day(m: dict[str, Any]) -> int:
    """The BookMinder day of the first session a memory came from (0 for other projects)."""
    for sid in m.get("session_ids", []):
        if sid.startswith("bookminder-d"):
            return int(sid[12:15])
    return 0


def _rule_words(m: dict[str, Any]) -> int:
    text = m["content"].split(": \"", 1)[-1]
    return len(text.split())


def cross_validate(tag: str) -> str:
    """Choose the user-rule minimum length on one half of BookMinder, report it on the other.

    Only a filter can be cross-validated on a fixed labelled list (a stricter threshold keeps
    a subset, whose labels are known). Objective: useful - 2 x noise (a noisy memory costs a
    reader more than a missing one helps), ties to the smaller threshold.
    """
    mems = [json.loads(ln) for ln in (OUT / f"{tag}.jsonl").read_text(encoding="utf-8").splitlines() if ln]
    labels = load_labels()
    rules = [m for m in mems if m["signal"] == "user_rule" and m["key"] in labels and _day(m)]
    halves = {"days 1-10": [m for m in rules if _day(m) <= 10], "days 11-21": [m for m in rules if _day(m) > 10]}

    def score(ms: list[dict[str, Any]], w: int) -> tuple[int, int, int]:
        kept = [m for m in ms if _rule_words(m) >= w]
        c = Counter(labels[m["key"]] for m in kept)
        return c["useful"] - 2 * c["noise"], c["useful"], c["noise"]
    lines = ["| chosen on | min words chosen | on the other half: useful / noise / kept | objective there |",
             "|---|---|---|---|"]
    for name, train in halves.items():
        test = next(v for k, v in halves.items() if k != name)
        best = max(RULE_WORDS_GRID, key=lambda w: (score(train, w)[0], -w))
        obj, useful, noise = score(test, best)
        kept = sum(1 for m in test if _rule_words(m) >= best)
        lines.append(f"| {name} | {best} | {useful} / {noise} / {kept} of {len(test)} | {obj} |")
    grid = " ".join(f"{w}:{score(rules, w)[0]}" for w in RULE_WORDS_GRID)
    lines.append(f"\nobjective on all {len(rules)} labelled BookMinder rules per threshold: {grid}")
    return "\n".join(lines)


def main() -> None:
    """learn TAG | report TAG | cv TAG."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("learn", "report", "cv"))
    ap.add_argument("tag")
    ap.add_argument("--days", help="BookMinder days only, e.g. 1-10")
    ap.add_argument("--hashing", action="store_true",
                    help="novelty with the hashing embedder (the app's fallback) instead of the bundled model")
    args = ap.parse_args()
    if args.action == "learn":
        # The app's own choice (composition.novelty_embedder: the bundled MiniLM when it loads),
        # or the hashing fallback it uses when no model loads.
        settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="engram-memory-quality-settings-")))
        _EMBEDDER.append(HashingEmbedder() if args.hashing else novelty_embedder(settings))
        sys.stdout.write(f"novelty embedder: {type(_EMBEDDER[0]).__name__}\n")
        days = tuple(int(x) for x in args.days.split("-")) if args.days else None
        mems = learn(days)  # type: ignore[arg-type]
        OUT.mkdir(exist_ok=True)
        (OUT / f"{args.tag}.jsonl").write_text(
            "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in mems), encoding="utf-8")
        sys.stdout.write(f"{len(mems)} memories -> {OUT / (args.tag + '.jsonl')}\n")
    elif args.action == "cv":
        sys.stdout.write(cross_validate(args.tag) + "\n")
    else:
        sys.stdout.write(report(args.tag) + "\n")


if __name__ == "__main__":
    main()
