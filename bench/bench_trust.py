"""Trust and security: every attack case of issues 14 and 27 (held / failed), and what the guards cost.

Run: .venv/bin/python bench/bench_trust.py [--cases] [--timing]   (both by default)

``--cases`` runs the attack tests (real ``engram hook`` processes, the MCP tools, the CLI, a
real PostgreSQL, a real full disk, a real stopped service) and prints one row per case: the
issue item it attacks, the doors it goes through, and whether the defence held. A case is
a test; a parametrized test is one case per parameter. ``--timing`` measures what the
redaction boundary, the scanner and the service's hello probe cost (add `uptime` beside it:
the box is shared).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
N_MEMORIES = 5000
RUNS = 3

#: Test file -> the doors its cases go through. Files named for issue 27 hold one case per item
#: (the test name says which); the others are the classes that already held when it was filed.
CASE_FILES: dict[str, str] = {
    "tests/security/test_hostile_repository.py": "hook process, warm service, MCP launch",
    "tests/security/test_hook_socket_user.py": "hook client, warm service (second local user)",
    "tests/security/test_agent_promotion.py": "engram hook (Stop, SessionEnd, prompt, start), MCP, CLI",
    "tests/security/test_secret_leaks.py": "MCP, engram hook, index, export, CLI, logs, GUI words",
    "tests/team/test_trust_attacks.py": "team sync (real PostgreSQL), MCP, server SQL",
    "tests/security/test_robustness.py": "CLI, engram hook, engram serve (real tmpfs, SIGSTOP)",
    "tests/security/test_fresh_attacks.py": "second round: engram hook, CLI, MCP, warnings ledger",
    "tests/security/test_trust.py": "core, MCP, import (issue 14)",
    "tests/security/test_validation.py": "core, CLI (bad input)",
    "tests/security/test_mcp_framing.py": "MCP stdio framing",
    "tests/security/test_redaction_boundary.py": "write boundary, forget --leaked",
    "tests/security/test_detectors.py": "scanner",
    "tests/store/test_bad_input.py": "store (full disk, read-only, corrupt file)",
    "tests/store/test_writer_concurrency.py": "writer (SIGKILL mid-write)",
    "tests/team/test_privacy.py": "team server (secrets, RLS, revoke)",
}
_ITEM = re.compile(r"item(\d+)")


def run_cases() -> list[tuple[str, str, str, str, float, str]]:
    """(item, case, doors, held|FAILED|skipped, seconds, why it failed) for every case, in file order."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "cases.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                        *CASE_FILES], cwd=ROOT, capture_output=True, text=True, check=False,
                       env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
        root = ET.parse(report).getroot()
    rows = []
    for case in root.iter("testcase"):
        path = str(case.get("classname", "")).replace(".", "/") + ".py"
        name = str(case.get("name", ""))
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        verdict = "skipped" if case.find("skipped") is not None else "FAILED" if bad is not None else "held"
        why = " ".join(str(bad.get("message", "")).split())[:200] if bad is not None else ""
        m = _ITEM.search(name)
        item = m.group(1) if m else ("1" if "hostile_repository" in path else "2" if "socket_user" in path else "—")
        rows.append((item, name.removeprefix("test_"), CASE_FILES.get(path, path), verdict,
                     float(case.get("time", 0.0)), why))
    return rows


def _bulk_add(guarded: bool) -> float:
    import desktop.memory.privacy.boundary as boundary
    from desktop.memory.service import MemoryService
    from desktop.memory.store.database import Database
    from desktop.memory.store.memory_ops import NewMemory

    original = boundary._params
    if not guarded:
        boundary._params = lambda p: p  # the writer exactly as it was before the boundary
    try:
        with tempfile.TemporaryDirectory() as tmp, Database(Path(tmp) / "b.db") as db:
            svc = MemoryService(db)
            items = [NewMemory(content=f"Memory {i}: the cache key of module m{i % 50} includes the tenant id",
                               source="agent_explicit", related_files=[f"src/m{i % 50}/cache_{i}.py"],
                               tags=["observer", "gotcha"], metadata={"signal_key": f"error_retry:{i:08x}"})
                     for i in range(N_MEMORIES)]
            start = time.perf_counter()
            for k in range(0, N_MEMORIES, 500):
                svc.add_many(items[k:k + 500], actor="observer").result(120)
            return time.perf_counter() - start
    finally:
        boundary._params = original


def _scan_us(texts: list[str]) -> float:
    from desktop.memory.privacy.secrets import scan

    start = time.perf_counter()
    for t in texts:
        scan(t)
    return (time.perf_counter() - start) / len(texts) * 1e6


def _tool_outputs(limit: int = 600) -> list[str]:
    """Tool results of the shared Claude Code transcripts (what the observer and hooks really see)."""
    import json

    out: list[str] = []
    for f in sorted((ROOT / ".." / "shared" / "data" / "transcripts").rglob("*.jsonl"))[:30]:
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                msg = json.loads(line).get("message") or {}
            except ValueError:
                continue
            for block in msg.get("content") or [] if isinstance(msg, dict) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    body = block.get("content")
                    if isinstance(body, list):
                        body = "\n".join(str(b.get("text", "")) for b in body if isinstance(b, dict))
                    if isinstance(body, str) and body:
                        out.append(body[:20_000])
            if len(out) >= limit:
                return out
    return out


def _hello_ms(n: int = 200) -> list[float]:
    """Connect + hello of a live hook service (what every hook now pays before asking)."""
    from desktop.agents.hooks import client, service

    with tempfile.TemporaryDirectory() as tmp:
        hooks = service.HookService(Path(tmp), idle=60, warm_search=False)
        thread = threading.Thread(target=hooks.serve, daemon=True)
        thread.start()
        path = client.socket_path(Path(tmp))
        while not path.exists():
            time.sleep(0.01)
        out = []
        for _ in range(n):
            t = time.perf_counter()
            sock = client._connect(path, 1.0, 1.0)
            out.append((time.perf_counter() - t) * 1000)
            if sock is not None:
                sock.close()
        hooks.stop()
        thread.join(10)
    return out


def timing() -> None:
    """Measure and print the cost table."""
    off = [_bulk_add(False) for _ in range(RUNS)]
    on = [_bulk_add(True) for _ in range(RUNS)]
    short = ([f"src/module/file_{i}.py" for i in range(20000)] + ["2026-11-23T20:00:00.000Z"] * 20000
             + [f"SomeSymbolName{i}" for i in range(20000)])
    outputs = _tool_outputs()
    hello = sorted(_hello_ms())
    print("| measure | runs | median | min |\n|---|---|---|---|")
    print(f"| add {N_MEMORIES} agent memories, writer without boundary (s) | {RUNS} | "
          f"{statistics.median(off):.2f} | {min(off):.2f} |")
    print(f"| same, with the boundary (s) | {RUNS} | {statistics.median(on):.2f} | {min(on):.2f} |")
    print(f"| scan() of a short clean string (µs, n={len(short)}) | 1 | {_scan_us(short):.2f} | |")
    if outputs:
        print(f"| scan() of a real tool output (µs, n={len(outputs)}, mean "
              f"{sum(map(len, outputs)) // len(outputs)} chars) | 1 | {_scan_us(outputs):.0f} | |")
    print(f"| hook client: connect + hello of a live service (ms, n={len(hello)}) | 1 | "
          f"{statistics.median(hello):.2f} | {hello[0]:.2f} |")


def main() -> None:
    """Run what was asked (both by default) and print Markdown."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", action="store_true", help="only the attack cases")
    parser.add_argument("--timing", action="store_true", help="only the costs")
    args = parser.parse_args()
    both = not (args.cases or args.timing)
    if args.cases or both:
        rows = run_cases()
        print("| item | case | doors | result | s |\n|---|---|---|---|---|")
        for item, name, doors, verdict, secs, _why in rows:
            print(f"| {item} | {name} | {doors} | {verdict} | {secs:.1f} |")
        held = sum(r[3] == "held" for r in rows)
        failed = sum(r[3] == "FAILED" for r in rows)
        print(f"\n{len(rows)} cases: {held} held, {failed} failed, {len(rows) - held - failed} skipped.\n")
        for _item, name, _doors, verdict, _secs, why in rows:
            if verdict == "FAILED":
                print(f"- {name}: {why}")
    if args.timing or both:
        timing()


if __name__ == "__main__":
    main()
