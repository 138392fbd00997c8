"""Everything a replay said, as distinct pieces for a judge who does not know which rules said it.

Reads a replay's ``said.jsonl`` (``../shared/tools/replay_sessions.py`` or ``bench/replay_hooks.py``)
and the corpus it replayed, splits each said text into its pieces (one memory, one warning line, one
session-start item), and writes one JSON line per distinct piece: a stable key (a hash of the text),
the text, how often it was said, and up to three moments it was said at (the event and, before or
after a tool call, the call itself from the transcript). Shuffled by key; nothing names the version,
the rule or the detector. The judge's labels (useful / useless / wrong) go in a TSV keyed by the key.

    .venv/bin/python bench/said_pieces.py CORPUS WORK OUT.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from pathlib import Path
from typing import Any

_ITEM = re.compile(r"<(?:memory|item)\b[^>]*>(.*?)</(?:memory|item)>", re.S)
_LINE = re.compile(r"^- (.+)$", re.M)


def pieces(text: str) -> list[str]:
    """The separately judgeable parts of one said text."""
    found = [" ".join(m.group(1).split()) for m in _ITEM.finditer(text)]
    found += [" ".join(m.group(1).split()) for m in _LINE.finditer(text)]
    if not found:  # a one-line warning with no list (the shell's folder)
        found = [" ".join(text.split())]
    return [re.sub(r"^\[Memory #\d+\] ", "", p) for p in found if p]


def key(text: str) -> str:
    """A stable key for a piece: its text without the memory id and the evidence count in front."""
    bare = re.sub(r"^\([^)]*\) ", "", re.sub(r"#\d+", "#", text))
    return hashlib.sha256(bare.encode()).hexdigest()[:12]


def tool_call_at(corpus: Path, index: list[dict[str, Any]], n: int, line: int) -> str:
    """The tool call(s) on line ``line`` of session ``n``, in a few words."""
    try:
        rec = json.loads((corpus / "sessions" / index[n]["file"]).read_text(encoding="utf-8")
                         .splitlines()[line - 1])
    except (IndexError, ValueError, OSError):
        return ""
    content = (rec.get("message") or {}).get("content")
    calls = [b for b in content if isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")] \
        if isinstance(content, list) else []
    out = []
    for b in calls[:2]:
        if b.get("type") == "tool_use":
            out.append(f"{b.get('name')} {json.dumps(b.get('input') or {}, ensure_ascii=False)[:200]}")
        else:
            body = b.get("content")
            text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
            out.append(("error: " if b.get("is_error") else "result: ") + " ".join(text.split())[:200])
    return " | ".join(out)


def main() -> None:
    """Write the distinct pieces."""
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("work", type=Path)
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    index = json.loads((args.corpus / "sessions" / "index.json").read_text())
    by_key: dict[str, dict[str, Any]] = {}
    for raw in (args.work / "said.jsonl").read_text(encoding="utf-8").splitlines():
        said = json.loads(raw)
        for piece in pieces(said["text"]):
            entry = by_key.setdefault(key(piece), {"key": key(piece), "text": piece, "said": 0, "moments": []})
            entry["said"] += 1
            if len(entry["moments"]) < 3:
                entry["moments"].append({"event": said["event"], "session": said["n"],
                                         "call": tool_call_at(args.corpus, index, said["n"], said["line"])
                                         if said["event"] != "SessionStart" else ""})
    with args.out.open("w", encoding="utf-8") as out:
        for k in sorted(by_key):
            out.write(json.dumps(by_key[k], ensure_ascii=False) + "\n")
    print(f"{len(by_key)} distinct pieces, said {sum(e['said'] for e in by_key.values())} times -> {args.out}")


if __name__ == "__main__":
    main()
