"""What Engram learns from each dev project, dumped for blind labelling, and the labelled table.

Commands, each a single run:

    .venv/bin/python bench/memory_quality.py learn TAG [--blind RUN]   # learn every project
    .venv/bin/python bench/memory_quality.py report TAG                # precision / noise from labels
    .venv/bin/python bench/memory_quality.py cv RULE_LABELS            # rule threshold, leave one project out

``learn`` replays each dev project into its own throw-away project database, by the code
path of ``engram ingest`` (``Ingestor`` with the lifecycle-gated promoter):

* ``bookminder``: the BookMinder terminal logs (through bench/bookminder_parser.py, session
  by session);
* ``synapse``: the two Claude Code sessions of the synapse project
  (``transcripts/claude-code``: ``synapse-070001ad.jsonl`` and ``gemini-cli-project/``);
* ``entire-cli``: the 260 sessions of ``corpora/entire-cli.tar.xz`` in time order
  (``--entire DIR``: an unpacked copy, from ``corpora/materialise.py``; without it the
  corpus is unpacked into a temporary folder first); ``--half first|second`` learns only
  that half of the sessions (the time-split check of the thresholds).

Every live memory (candidates included) is written to ``bench/memory_quality/TAG.jsonl``
with a stable key (project, type and text hashed), so labels survive a re-run. With
``--blind RUN`` each project is also written to ``<judging>/dumps/RUN/<project>.jsonl``
(``--judging``, default ``/work/judging``): one JSON line per memory with only its key,
type, text and files, shuffled, with no detector name and no version, for judges who
label without knowing how a memory was made.

``report`` joins the dump with ``bench/memory_quality/labels.tsv`` (key, label, note;
labels useful / weak / noise, rubric in ``RUBRIC.md``) and with the facts files
(``facts.tsv`` for BookMinder; ``--facts DIR`` for the others, one ``<project>.tsv``
each). Unlabelled memories are reported as such, never guessed.

``cv`` chooses the user-rule threshold of ``observer/rule_scorer.py`` on two projects and
reports it on the third (all three ways), and on each half of entire-cli from the
other, from a file of development labels of candidate sentences (JSON lines with
``project``, ``text``, ``label`` R or N, and ``half`` for entire-cli). Those labels stay
outside the repository (the transcripts are not ours to copy). Reported: the spread over
the held-out folds, not the best fold.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bookminder_parser import parse_all  # noqa: E402
from bench.common import SHARED  # noqa: E402
from desktop.memory.lifecycle.control import gated_promoter  # noqa: E402
from desktop.memory.models import CoreModels  # noqa: E402
from desktop.memory.observer import rule_scorer  # noqa: E402
from desktop.memory.observer.cues import detect_language  # noqa: E402
from desktop.memory.observer.ingest import Ingestor  # noqa: E402
from desktop.memory.observer.novelty import HashingEmbedder, Novelty  # noqa: E402
from desktop.memory.project_services import novelty_embedder  # noqa: E402
from desktop.memory.store.database import Database  # noqa: E402
from desktop.settings import Settings  # noqa: E402

OUT = ROOT / "bench" / "memory_quality"
TRANSCRIPTS = SHARED / "transcripts"
PROJECTS = ("bookminder", "synapse", "entire-cli")
LABELS = ("useful", "weak", "noise")
LESSONS = frozenset({"user_rule", "command_fix", "recipe", "error_fix", "stated_cause", "hook_block", "project_fact"})
SYNTHESIS = frozenset({"co_access", "prefetch_pattern", "weekly_synthesis", "workflow_recipe", "module_synthesis"})


def memory_key(project: str, mtype: str, content: str) -> str:
    """A stable id for one memory text of one project (labels are keyed by it)."""
    return hashlib.sha1(f"{project}|{mtype}|{content}".encode()).hexdigest()[:12]


def text_key(project: str, text: str) -> str:
    """A stable id for one user sentence of one project (development labels are keyed by it)."""
    return hashlib.sha1(f"{project}|{' '.join(text.split())}".encode()).hexdigest()[:12]


_EMBEDDER: list[Any] = []  # chosen once per run by main() (loading the model takes seconds)


def _open(tmp: Path, name: str, root: Path | None = None) -> tuple[Database, Ingestor]:
    """A fresh database and the product's ingestor; ``root``: the project's checkout, as the app
    passes it (its agent instruction files decide what the agents were told already)."""
    db = Database(tmp / f"{name}.db").open()
    return db, Ingestor(db, gated_promoter(db, novelty=Novelty(_EMBEDDER[0]), root=root))


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


def entire_sessions(entire: Path | None, half: str | None = None) -> list[Path]:
    """The entire-cli session files in time order (unpacked into a temporary folder when not given)."""
    if entire is None:
        entire = Path(tempfile.mkdtemp(prefix="engram-entire-cli-"))
        subprocess.run([sys.executable, str(SHARED / "corpora" / "materialise.py"), "entire-cli", str(entire)],
                       check=True, capture_output=True)
    index = json.loads((entire / "sessions" / "index.json").read_text(encoding="utf-8"))
    files = [entire / "sessions" / e["file"] for e in index]
    if half == "first":
        return files[:len(files) // 2]
    if half == "second":
        return files[len(files) // 2:]
    return files


def synapse_files() -> list[Path]:
    """The two synapse sessions (the second with its sub-agents, imported with their parent)."""
    cc = TRANSCRIPTS / "claude-code"
    return [cc / "synapse-070001ad.jsonl", *sorted((cc / "gemini-cli-project").glob("*.jsonl"))]


def learn(projects: tuple[str, ...] = PROJECTS, *, entire: Path | None = None, half: str | None = None
          ) -> dict[str, list[dict[str, Any]]]:
    """Learn each project into its own database and return its live memories."""
    tmp = Path(tempfile.mkdtemp(prefix="engram-memory-quality-"))
    out: dict[str, list[dict[str, Any]]] = {}
    for name in projects:
        # Only entire-cli comes with its repository; the other corpora are transcripts alone.
        root = entire / "repo" if name == "entire-cli" and entire is not None and (entire / "repo").is_dir() else None
        db, ing = _open(tmp, name, root)
        if name == "bookminder":
            for s in parse_all(TRANSCRIPTS / "bookminder"):
                ing.learn_events(s.events)
        else:
            for f in (synapse_files() if name == "synapse" else entire_sessions(entire, half)):
                ing.ingest_file(f)
        out[name] = _dump(db, name)
        db.close()
    return out


def write_blind(mems: dict[str, list[dict[str, Any]]], judging: Path, run: str, suffix: str = "") -> list[Path]:
    """One shuffled JSON line per memory (key, type, text, files) per project, for blind judges.

    ``suffix`` names a partial run (``-first``: the first half of entire-cli); keys stay the
    project's, so a memory labelled in the full run needs no second label."""
    folder = judging / "dumps" / run
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for project, ms in mems.items():
        rows = [{"key": m["key"], "type": m["type"], "text": m["content"], "files": m["files"]} for m in ms]
        random.Random(f"{run}|{project}{suffix}").shuffle(rows)
        path = folder / f"{project}{suffix}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        paths.append(path)
    return paths


def load_labels(path: Path | None = None) -> dict[str, str]:
    """key -> label from a labels file (TSV: key, label, ...; or JSON lines with key and label)."""
    labels: dict[str, str] = {}
    path = path or OUT / "labels.tsv"
    if not path.exists():
        return labels
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("{"):
            row = json.loads(line)
            if row.get("label") in LABELS:
                labels[str(row["key"])] = str(row["label"])
            continue
        parts = line.split("\t")
        if len(parts) >= 2 and parts[1] in LABELS:
            labels[parts[0]] = parts[1]
    return labels


def load_facts(path: Path) -> list[tuple[str, set[str]]]:
    """(fact, keys of memories that state it) from a facts TSV."""
    facts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            parts = line.split("\t")
            facts.append((parts[0], {k for k in (parts[1].split(",") if len(parts) > 1 else []) if k}))
    return facts


def _row(name: str, c: Counter[str]) -> str:
    n = sum(c.values())
    return (f"| {name} | {n} | {c['useful']} | {c['weak']} | {c['noise']} | {c['unlabelled']} | "
            f"{c['useful'] / n:.2f} | {c['noise'] / n:.0%} |" if n else f"| {name} | 0 |")


def report(tag: str, labels_path: Path | None = None, facts_dir: Path | None = None) -> str:
    """The Markdown table of one labelled dump, per project and per kind of lesson."""
    mems = [json.loads(ln) for ln in (OUT / f"{tag}.jsonl").read_text(encoding="utf-8").splitlines() if ln]
    labels = load_labels(labels_path)
    head = ["| subset | n | useful | weak | noise | unlabelled | precision | noise share |",
            "|---|---|---|---|---|---|---|---|"]
    lines = [f"memories: {len(mems)} (`{tag}.jsonl`)\n", *head]
    by_project: dict[str, Counter[str]] = defaultdict(Counter)
    for m in mems:
        by_project[m["project"]][labels.get(m["key"], "unlabelled")] += 1
    for p in sorted(by_project):
        lines.append(_row(f"project {p}", by_project[p]))
    lines.append(_row("**all**", sum(by_project.values(), Counter())))
    lines += ["", *head]
    for sig in sorted({m["signal"] for m in mems}):
        lines.append(_row(f"kind `{sig or 'other'}`", Counter(labels.get(m["key"], "unlabelled")
                                                              for m in mems if m["signal"] == sig)))
    lines.append(_row("candidates", Counter(labels.get(m["key"], "unlabelled") for m in mems if m["candidate"])))
    keys = {m["key"] for m in mems}
    fact_files = {"bookminder": OUT / "facts.tsv"}
    if facts_dir is not None:
        fact_files.update({p: facts_dir / f"{p}.tsv" for p in PROJECTS if (facts_dir / f"{p}.tsv").exists()})
    for project, path in fact_files.items():
        if path.exists() and project in by_project:
            stated = [(f, ks & keys) for f, ks in load_facts(path)]
            lines += ["", f"{project}: key facts stated by some memory: {sum(1 for _, k in stated if k)}/{len(stated)}"]
            lines += [f"- [{'x' if k else ' '}] {f}" for f, k in stated]
    return "\n".join(lines)


# -- choosing the rule threshold on two projects, reporting it on the third ------------------------

RULE_GRID = tuple(x / 4 for x in range(2, 17))


def _rule_scores(rows: list[dict[str, Any]]) -> list[tuple[str, str, float, bool]]:
    """(project, half, score now, labelled a standing rule) of each labelled sentence, scored by the current rules."""
    out = []
    for r in rows:
        cues = detect_language(r["text"])
        f = rule_scorer.features(r["text"], cues, r.get("origin", "prompt"))
        out.append((r["project"], r.get("half", ""), rule_scorer.score(f), r["label"] == "R"))
    return out


def _kept(rows: list[tuple[str, str, float, bool]], t: float) -> tuple[int, int]:
    kept = [r for r in rows if r[2] >= t]
    tp = sum(1 for r in kept if r[3])
    return tp, len(kept) - tp


def _objective(rows: list[tuple[str, str, float, bool]], t: float) -> int:
    """Rules kept that are right, minus four per wrong one: positive exactly when precision > 0.8."""
    tp, fp = _kept(rows, t)
    return tp - 4 * fp


def cross_validate(path: Path) -> str:
    """Choose the rule threshold on the other folds, report it on each held-out fold (and the spread)."""
    rows = _rule_scores([json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()])
    folds = {p: ([r for r in rows if r[0] != p], [r for r in rows if r[0] == p]) for p in PROJECTS}
    ent = [r for r in rows if r[0] == "entire-cli"]
    for a, b in (("first", "second"), ("second", "first")):
        folds[f"entire-cli {b} half (chosen on the {a})"] = ([r for r in ent if r[1] == a],
                                                               [r for r in ent if r[1] == b])
    lines = ["| held out | labelled | standing rules | threshold chosen on the rest | kept | right | precision | "
             "recall |", "|---|---|---|---|---|---|---|---|"]
    precisions = []
    for name, (train, test) in folds.items():
        t = max(RULE_GRID, key=lambda x: (_objective(train, x), -x))
        tp, fp = _kept(test, t)
        pos = sum(1 for r in test if r[3])
        prec = tp / (tp + fp) if tp + fp else float("nan")
        if tp + fp:
            precisions.append(prec)
        lines.append(f"| {name} | {len(test)} | {pos} | {t} | {tp + fp} | {tp} | {prec:.2f} | "
                     f"{tp / pos if pos else float('nan'):.2f} |")
    if precisions:
        lines.append(f"\nheld-out precision over {len(precisions)} folds with rules kept: min {min(precisions):.2f}, "
                     f"max {max(precisions):.2f}")
    lines.append("\nper threshold, right / wrong kept: " + "; ".join(
        f"{t}: " + " ".join(f"{p}={_kept([r for r in rows if r[0] == p], t)}" for p in PROJECTS) for t in RULE_GRID))
    return "\n".join(lines)


def main() -> None:
    """learn TAG | report TAG | cv LABELS."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("learn", "report", "cv"))
    ap.add_argument("tag", help="dump tag (learn, report) or the development labels file (cv)")
    ap.add_argument("--projects", default=",".join(PROJECTS), help="comma-separated subset of " + ", ".join(PROJECTS))
    ap.add_argument("--entire", type=Path, help="an unpacked entire-cli corpus (corpora/materialise.py)")
    ap.add_argument("--half", choices=("first", "second"), help="entire-cli: only this half of the sessions")
    ap.add_argument("--blind", help="also write blind per-project dumps under JUDGING/dumps/BLIND/")
    ap.add_argument("--judging", type=Path, default=Path("/work/judging"))
    ap.add_argument("--labels", type=Path, help="labels file (default bench/memory_quality/labels.tsv)")
    ap.add_argument("--facts", type=Path, help="folder of <project>.tsv key-fact files")
    ap.add_argument("--hashing", action="store_true",
                    help="novelty with the hashing embedder (the app's fallback) instead of the bundled model")
    args = ap.parse_args()
    if args.action == "learn":
        # The app's own choice (project_services.novelty_embedder: the bundled MiniLM when it loads),
        # or the hashing fallback it uses when no model loads.
        settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="engram-memory-quality-settings-")))
        _EMBEDDER.append(HashingEmbedder() if args.hashing else novelty_embedder(CoreModels(settings)))
        sys.stdout.write(f"novelty embedder: {type(_EMBEDDER[0]).__name__}\n")
        mems = learn(tuple(p for p in args.projects.split(",") if p), entire=args.entire, half=args.half)
        OUT.mkdir(exist_ok=True)
        (OUT / f"{args.tag}.jsonl").write_text("".join(json.dumps(m, ensure_ascii=False) + "\n"
                                                       for ms in mems.values() for m in ms), encoding="utf-8")
        for project, ms in mems.items():
            sys.stdout.write(f"{project}: {len(ms)} memories\n")
        if args.blind:
            suffix = f"-{args.half}-half" if args.half else ""
            for path in write_blind(mems, args.judging, args.blind, suffix):
                sys.stdout.write(f"blind dump: {path}\n")
    elif args.action == "cv":
        sys.stdout.write(cross_validate(Path(args.tag)) + "\n")
    else:
        sys.stdout.write(report(args.tag, args.labels, args.facts) + "\n")


if __name__ == "__main__":
    main()
