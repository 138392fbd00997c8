"""Replay real Claude Code sessions through Engram's hook handlers in one process (issue 25).

The twin of ``../shared/tools/replay_sessions.py`` for development: the same sessions, events,
payloads and scoring, but each hook is answered by the warm service's own code in this process
(``HookService.answer``) instead of a new ``engram hook`` process, so a hundred sessions replay in
minutes. Final numbers come from the shared tool, which runs the installed hooks as Claude Code
does; this one is for choosing rules on one half and reading what was said.

    .venv/bin/python bench/replay_hooks.py CORPUS WORK [--labels FILE] [--from N] [--to N]

Learning runs over every session from 0; ``--from``/``--to`` choose which sessions are scored
(e.g. tune on 0-49, report 50-99). Writes WORK/said.jsonl and WORK/warned.txt like the shared tool.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from desktop.agents.hooks.protocol import NATIVE_EVENTS, from_dict, render_output
from desktop.agents.hooks.service import HookService
from desktop.composition import Engram
from desktop.settings import Settings

NATIVE = {v: k for k, v in NATIVE_EVENTS["claude-code"].items()}


def said_text(stdout: str, event: str) -> tuple[str, bool]:
    """What reaches the model from a hook's stdout, as the shared tool reads it."""
    if not stdout:
        return "", False
    o = json.loads(stdout)
    hs = o.get("hookSpecificOutput") if isinstance(o.get("hookSpecificOutput"), dict) else {}
    out, deny = [], False
    if isinstance(hs.get("additionalContext"), str) and hs["additionalContext"].strip():
        out.append(hs["additionalContext"])
    if event == "PreToolUse" and (hs.get("permissionDecision") == "deny" or o.get("decision") == "block"):
        deny = True
        reason = hs.get("permissionDecisionReason") or o.get("reason")
        if isinstance(reason, str) and reason.strip():
            out.append(reason)
    return "\n".join(out), deny


def main() -> None:
    """Replay, score, print the summary line."""
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("work", type=Path)
    ap.add_argument("--labels", type=Path)
    ap.add_argument("--from", dest="first", type=int, default=0)
    ap.add_argument("--to", dest="last", type=int, default=10_000)
    args = ap.parse_args()
    corpus, work = args.corpus, args.work
    repo = corpus / "repo"
    labels = [json.loads(line) for line in args.labels.read_text().splitlines()] if args.labels else []
    if work.exists():
        shutil.rmtree(work)
    data, tdir = work / "data", work / "transcripts"
    tdir.mkdir(parents=True)
    Engram(Settings(data_dir=data)).open_project(repo, remember=False).close()
    service = HookService(data, warm_search=False)
    index = json.loads((corpus / "sessions" / "index.json").read_text())[: args.last + 1]
    lat: dict[str, list[float]] = {}
    said_at: dict[int, list[tuple[int, str]]] = {}
    tokens: list[int] = []
    blocked: list[tuple[int, int, str, bool]] = []
    log = (work / "said.jsonl").open("w")

    def fire(event: str, payload: dict[str, Any]) -> tuple[str, bool]:
        t = time.perf_counter()
        call = from_dict("claude-code", NATIVE[event], payload)
        text = service.answer({"agent": "claude-code", "event": NATIVE[event], "payload": payload})
        lat.setdefault(event, []).append((time.perf_counter() - t) * 1000)
        return said_text(render_output(call, text), event)

    for n, s in enumerate(index):
        sid = s["session"]
        tpath = tdir / f"{sid}.jsonl"
        tfile = tpath.open("w")
        base = {"session_id": sid, "transcript_path": str(tpath), "cwd": str(repo)}
        said = said_at.setdefault(n, [])

        def say(line: int, event: str, text: str, n: int = n, sid: str = sid, said: list[Any] = said) -> None:
            if text:
                said.append((line, text))
                log.write(json.dumps({"n": n, "session": sid, "line": line, "event": event, "text": text}) + "\n")
        say(0, "SessionStart", fire("SessionStart", {**base, "hook_event_name": "SessionStart",
                                                    "source": "startup"})[0])
        uses: dict[str, tuple[str, dict[str, Any]]] = {}
        pending_deny: dict[str, tuple[int, int, str]] = {}
        lines = (corpus / "sessions" / s["file"]).read_text(encoding="utf-8").splitlines(keepends=True)
        for line_no, line in enumerate(lines, 1):
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
            c = msg.get("content")
            if rec.get("type") == "user" and not rec.get("isMeta") and not rec.get("isSidechain"):
                text = c if isinstance(c, str) else " ".join(
                    b.get("text", "") for b in c if isinstance(b, dict) and b.get("type") == "text") \
                    if isinstance(c, list) else ""
                if text.strip() and not text.lstrip().startswith("<"):
                    say(line_no, "UserPromptSubmit", fire("UserPromptSubmit", {
                        **base, "hook_event_name": "UserPromptSubmit", "prompt": text})[0])
            for b in c if isinstance(c, list) else []:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "tool_use":
                    name, inp = b.get("name"), b.get("input") or {}
                    uses[b.get("id")] = (name, inp)
                    text, deny = fire("PreToolUse", {**base, "hook_event_name": "PreToolUse", "tool_name": name,
                                                     "tool_input": inp, "tool_use_id": b.get("id")})
                    say(line_no, "PreToolUse", text)
                    if deny:
                        pending_deny[b.get("id")] = (n, line_no, name)
                elif b.get("type") == "tool_result" and b.get("tool_use_id") in uses:
                    name, inp = uses[b.get("tool_use_id")]
                    if b.get("tool_use_id") in pending_deny:
                        blocked.append((*pending_deny.pop(b.get("tool_use_id")), not b.get("is_error")))
                    out = b.get("content")
                    out = out if isinstance(out, str) else json.dumps(out)
                    if b.get("is_error"):
                        say(line_no, "PostToolUseFailure", fire("PostToolUseFailure", {
                            **base, "hook_event_name": "PostToolUseFailure", "tool_name": name, "tool_input": inp,
                            "tool_use_id": b.get("tool_use_id"), "error": out[:20000]})[0])
                    else:
                        resp = {"stdout": out[:20000], "stderr": "", "interrupted": False} if name == "Bash" \
                            else out[:20000]
                        say(line_no, "PostToolUse", fire("PostToolUse", {
                            **base, "hook_event_name": "PostToolUse", "tool_name": name, "tool_input": inp,
                            "tool_response": resp, "tool_use_id": b.get("tool_use_id")})[0])
            tfile.write(line)
            tfile.flush()
        tfile.close()
        fire("Stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False})
        fire("SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "exit"})
        tokens.append(sum(len(t) for _, t in said) // 4)
        print(f"session {n:3d} {sid[:8]}: said ~{tokens[-1]} tokens in {len(said)} pieces", flush=True)
    service.close()
    log.close()

    scored = [lab for lab in labels if args.first <= lab["n"] <= min(args.last, len(index) - 1)]
    warned = []
    for lab in scored:
        blob = "\n".join(t for line, t in said_at.get(lab["n"], []) if line < lab["line"]).lower()
        need = math.ceil(len(lab["terms"]) / 2)
        warned.append((sum(1 for t in lab["terms"] if t.lower() in blob) >= need, lab))
    with open(work / "warned.txt", "w") as f:
        for ok, lab in warned:
            f.write(f"{'WARNED' if ok else 'missed'} s{lab['n']} L{lab['line']} {lab['kind']}: "
                    f"{(lab.get('lesson') or '')[:160]}\n")
    window = tokens[args.first: args.last + 1]
    events = {k: (round(statistics.median(v)), round(sorted(v)[int(0.95 * (len(v) - 1))]), len(v))
              for k, v in lat.items()}
    w = sum(ok for ok, _ in warned)
    print(f"blocked: {len(blocked)} ({sum(1 for *_, ok in blocked if ok)} succeeded in the recording)")
    print(f"hook ms p50/p95/n {events}")
    print(f"sessions {args.first}-{min(args.last, len(index) - 1)}: warned {w}/{len(warned)}; tokens/session "
          f"median {statistics.median(window) if window else 0:.0f}, max {max(window) if window else 0}")


if __name__ == "__main__":
    main()
