"""Can meaning alone find a repeated instruction? The local sentence model against the labels.

Issue 25's 32 labelled repeated instructions are paraphrases of an earlier request ("can you
check the tests are not duplicated?" / "can we double check we are not having test duplication
now?"); matching them by shared rare words failed (branch ``asks``: 0 of 32). This asks whether
the shipped sentence model (all-MiniLM-L6-v2, the one the observer's novelty check uses) tells
them apart from the rest of what the user typed, before anything is built on it.

For every user utterance of the first 100 entire-cli sessions (the user's own words, as the
observer reads them: ``utterances.user_utterance``; tool-refusal feedback included; four words
or more) it embeds the text, and reports:

* for each labelled repeat: its cosine to the utterance the label names as the first time, that
  first's rank among all earlier-session utterances, and the best earlier match;
* the background: the share of all utterances whose best match in an earlier session reaches
  each threshold (a rule made at that threshold would be made from those).

    .venv/bin/python bench/asks_similarity.py [--entire DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np
from common import SHARED

from desktop.memory.embedding.local import LocalMiniLMProvider
from desktop.memory.observer.utterances import user_utterance

LABELS = SHARED / "corpora" / "labels" / "entire-cli.jsonl"
REFUSAL = "the user said:"


def _texts(record: dict[str, Any]) -> list[str]:
    """What the user typed in one transcript record: prompts, and feedback when refusing a call."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "text":
            out.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            body = block.get("content")
            text = body if isinstance(body, str) else " ".join(
                str(b.get("text", "")) for b in body or [] if isinstance(b, dict))
            if REFUSAL in text:
                out.append(text.split(REFUSAL, 1)[1])
    return out


def utterances(folder: Path, limit: int) -> list[tuple[int, int, str]]:
    """(session index, transcript line, the user's own words) for the first ``limit`` sessions."""
    index = json.loads((folder / "index.json").read_text())[:limit]
    found = []
    for n, entry in enumerate(index):
        for line_no, line in enumerate((folder / entry["file"]).read_text().splitlines(), 1):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("type") != "user" or record.get("isMeta"):
                continue
            for text in _texts(record):
                said = user_utterance(text)
                if said is not None and len(said.text.split()) >= 4 and len(said.text) < 1500:
                    found.append((n, line_no, said.text[:600]))
    return found


def main() -> None:
    """Print the two tables (Markdown) for bench/RESULTS.md."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entire", type=Path, default=Path("/work/data/lead/entire-cli"))
    args = ap.parse_args()
    utts = utterances(args.entire / "sessions", 100)
    vectors = np.asarray(LocalMiniLMProvider().embed([t for *_, t in utts]), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-9
    sims = vectors @ vectors.T
    session = np.array([n for n, *_ in utts])
    at = {(n, line): i for i, (n, line, _) in enumerate(utts)}
    labels = [json.loads(x) for x in LABELS.read_text().splitlines() if x.strip()]
    print(f"{len(utts)} utterances of 100 sessions\n")
    print("| session | repeated instruction | cosine to its first | first's rank | best earlier match |")
    print("|---|---|---|---|---|")
    to_first = []
    for lab in labels:
        i, first = at.get((lab["n"], lab["line"])), at.get((lab["first"]["n"], lab["first"]["line"]))
        if lab["kind"] == "failure" or i is None or first is None or lab["first"]["n"] >= lab["n"]:
            continue
        earlier = np.where(session < lab["n"])[0]
        best = float(sims[i, earlier].max())
        rank = int((sims[i, earlier] > sims[i, first]).sum()) + 1
        to_first.append(float(sims[i, first]))
        print(f"| {lab['n']} | {lab['cluster']} | {sims[i, first]:.2f} | {rank} of {len(earlier)} | {best:.2f} |")
    print(f"\nmedian cosine of a labelled repeat to its first: {statistics.median(to_first):.2f} "
          f"(n = {len(to_first)})\n")
    best_earlier = [float(sims[i, np.where(session < n)[0]].max()) for i, (n, *_) in enumerate(utts)
                    if (session < n).any()]
    print("| threshold | utterances with an earlier-session match at or above it |")
    print("|---|---|")
    for t in (0.5, 0.6, 0.7, 0.8):
        hits = sum(b >= t for b in best_earlier)
        print(f"| {t} | {hits} of {len(best_earlier)} ({hits / len(best_earlier):.0%}) |")


if __name__ == "__main__":
    main()
