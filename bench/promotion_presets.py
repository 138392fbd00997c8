"""Issue 15: what each promotion preset learns from the same transcripts, through the real doors' observer.

Run: .venv/bin/python bench/promotion_presets.py [TRANSCRIPT ...]
(default: every Claude Code transcript under ../shared/data/transcripts plus tests/observer/samples).
Each preset gets a fresh project; the transcripts are ingested, in order, by the composition
root's observer (the one `engram ingest`, the hooks and `engram serve` use). Prints a Markdown table.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop.composition import Engram
from desktop.memory.observer.novelty import HashingEmbedder
from desktop.memory.trust_levels import PROMOTION_PRESETS
from desktop.settings import Settings

REPO = Path(__file__).resolve().parents[1]


def default_files() -> list[Path]:
    """The shared real transcripts and the test samples, sorted."""
    real = sorted((REPO.parent / "shared" / "data" / "transcripts").rglob("*.jsonl"))
    return real + sorted((REPO / "tests" / "observer" / "samples").iterdir())


def learn(preset: str, files: list[Path]) -> tuple[int, int, Counter[str]]:
    """(memories, of which candidates, memories per signal) after ingesting ``files`` under ``preset``."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        project = Engram(Settings(data_dir=folder / "data")).open_project(folder, remember=False)
        try:
            project.preferences.set(promotion_preset=preset, actor="cli")
            ingestor = project.build_observer(embedder=HashingEmbedder())
            for f in files:
                ingestor.ingest_file(f)
            rows = project.db.reads.conn().execute(
                "SELECT candidate, coalesce(json_extract(metadata, '$.signal'), source) FROM memories"
                " WHERE type <> 'code'").fetchall()
        finally:
            project.close()
    return len(rows), sum(int(c) for c, _ in rows), Counter(str(s) for _, s in rows)


def main(argv: list[str]) -> int:
    """Print one row per preset."""
    files = [Path(a) for a in argv] or default_files()
    print(f"{len(files)} transcripts\n")
    print("| preset | memories | candidates | by signal |")
    print("|---|---|---|---|")
    for name in PROMOTION_PRESETS:
        n, cand, kinds = learn(name, files)
        print(f"| {name} | {n} | {cand} | {', '.join(f'{k} {v}' for k, v in kinds.most_common()) or '-'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
