"""Everything a replay said, as distinct pieces for a judge who does not know which rules said it.

Reads a replay's ``said.jsonl`` (``../shared/tools/replay_sessions.py`` or ``bench/replay_hooks.py``)
and the corpus it replayed, splits each said text into its pieces (one memory, one warning line, one
session-start item), and writes one JSON line per distinct piece: a stable key (a hash of the text),
the text, how often it was said, every session it was said in, and up to five moments spread over the
run (the event and, before or after a tool call, the call itself from the transcript): the first
moments alone misled two judges (round 6: a lesson's first three sayings came before its failures
existed). ``--by-moment`` keys a piece by its event too, so a lesson said before a call and after a
failure is judged as two pieces. Shuffled by key; nothing names the version, the rule or the
detector. The judge's labels (useful / useless / wrong) go in a TSV keyed by the key.

    .venv/bin/python bench/said_pieces.py CORPUS WORK OUT.jsonl [--by-moment]
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


MAX_MOMENTS = 5


def key(text: str, event: str = "") -> str:
    """A stable key for a piece: its text without the memory id and the evidence count in front (and
    the event it was said at, when pieces are judged by moment)."""
    bare = re.sub(r"^\([^)]*\) ", "", re.sub(r"#\d+", "#", text))
    return hashlib.sha256((f"{event}\n{bare}" if event else bare).encode()).hexdigest()[:12]


def spread(items: list[Any], k: int) -> list[Any]:
    """Up to ``k`` of ``items``, evenly spaced from the first to the last."""
    if len(items) <= k:
        return items
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)]


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
    ap.add_argument("--by-moment", action="store_true", help="one piece per text and event")
    args = ap.parse_args()
    index = json.loads((args.corpus / "sessions" / "index.json").read_text())
    by_key: dict[str, dict[str, Any]] = {}
    for raw in (args.work / "said.jsonl").read_text(encoding="utf-8").splitlines():
        said = json.loads(raw)
        for piece in pieces(said["text"]):
            k = key(piece, said["event"] if args.by_moment else "")
            entry = by_key.setdefault(k, {"key": k, "text": piece, "said": 0, "sessions": [], "at": []})
            entry["said"] += 1
            if said["n"] not in entry["sessions"]:
                entry["sessions"].append(said["n"])
            entry["at"].append(said)
    with args.out.open("w", encoding="utf-8") as out:
        for k in sorted(by_key):
            entry = by_key[k]
            entry["moments"] = [{"event": m["event"], "session": m["n"],
                                 "call": tool_call_at(args.corpus, index, m["n"], m["line"])
                                 if m["event"] != "SessionStart" else ""} for m in spread(entry.pop("at"), MAX_MOMENTS)]
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")
    print(f"{len(by_key)} distinct pieces, said {sum(e['said'] for e in by_key.values())} times -> {args.out}")


if __name__ == "__main__":
    main()
