"""Cold code-graph index on one core and on every core: files/s, lines/s, CPU, peak RSS.

Usage (one command; downloads are cached under /tmp/bench)::

    .venv/bin/python bench/bench_index_cores.py [--workers 1,2] [--only stdlib]

Codebases (none stored in the repository):

* this interpreter's standard library, without ``test``/``tests`` folders and
  ``idlelib`` (copied to /tmp/bench/stdlib so the tree is stable);
* Django, its newest wheel from PyPI (``pip download django``), unzipped;
* Effect 3 (``npm pack effect@3``), a large TypeScript codebase: its ``src/``.

Each run indexes into a new database in a fresh subprocess (peak RSS is that run's,
worker processes reported separately), with code chunks stored as memories, as
``engram index`` does. The load average is printed beside each row: the machine is
shared, so wall-clock figures are pessimistic; CPU seconds are the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

WORK = Path("/tmp/bench")
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # this checkout's desktop/, not an installed copy
    sys.path.insert(0, str(ROOT))


def stdlib_tree() -> tuple[str, Path]:
    """A copy of the standard library without tests and idlelib."""
    dest = WORK / "stdlib"
    if not dest.is_dir():
        shutil.copytree(sysconfig.get_paths()["stdlib"], dest / "lib", symlinks=True, ignore=shutil.ignore_patterns(
            "__pycache__", "site-packages", "test", "tests", "idlelib", "lib-dynload", "config-3*"))
    return f"Python {sys.version_info.major}.{sys.version_info.minor} stdlib", dest


def django_tree() -> tuple[str, Path] | None:
    """Django's newest wheel from PyPI, unzipped (None when offline)."""
    dest = WORK / "django"
    if not (dest / "django").is_dir():
        dl = WORK / "dl"
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "django", "--no-deps", "--only-binary",
                               ":all:", "-q", "-d", str(dl)], capture_output=True, text=True)
        wheels = sorted(dl.glob("[Dd]jango-*.whl"))
        if proc.returncode != 0 or not wheels:
            return None
        with zipfile.ZipFile(wheels[-1]) as zf:
            zf.extractall(dest, [n for n in zf.namelist() if n.startswith("django/")])
    version = next((p.name.split("-")[1] for p in (WORK / "dl").glob("[Dd]jango-*.whl")), "?")
    return f"Django {version}", dest


def effect_tree() -> tuple[str, Path] | None:
    """The TypeScript sources of the npm package effect@3 (None when npm is missing or offline)."""
    dest = WORK / "effect"
    if not (dest / "package" / "src").is_dir():
        npm = shutil.which("npm")
        if npm is None:
            return None
        dl = WORK / "npm"
        dl.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([npm, "pack", "effect@3"], cwd=dl, capture_output=True, text=True)
        packs = sorted(dl.glob("effect-3*.tgz"))
        if proc.returncode != 0 or not packs:
            return None
        with tarfile.open(packs[-1]) as tf:
            tf.extractall(dest, filter="data")
    version = json.loads((dest / "package" / "package.json").read_text())["version"]
    return f"effect {version} src (TypeScript)", dest / "package" / "src"


def one(root: Path, workers: int) -> dict[str, object]:
    """Cold-index ``root`` into a new database (runs inside the child process)."""
    from desktop.memory.graph.service import GraphService
    from desktop.memory.store.database import Database

    tmp = Path(tempfile.mkdtemp(prefix="engram-cores-"))
    db = Database(tmp / "g.sqlite").open()
    svc = GraphService(db, root, chunks=True)
    svc.indexer.workers = workers
    t0 = time.perf_counter()
    report = svc.index()
    seconds = time.perf_counter() - t0
    files = [r[0] for r in db.reads.conn().execute("SELECT file_path FROM graph_files WHERE status<>'skipped'")]
    db.close()
    shutil.rmtree(tmp, ignore_errors=True)
    lines = sum((root / f).read_bytes().count(b"\n") for f in files)
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"files": report.indexed, "lines": lines, "seconds": seconds, "pooled": report.pooled,
            "chunks": report.chunks, "cpu_main": me.ru_utime + me.ru_stime,
            "cpu_workers": kids.ru_utime + kids.ru_stime,
            "rss_main": me.ru_maxrss / 1024, "rss_worker": kids.ru_maxrss / 1024}


def main() -> None:
    """Run every codebase with each worker count and print a Markdown table."""
    from desktop.memory.graph.parse_pool import default_workers

    ap = argparse.ArgumentParser()
    ap.add_argument("--one", type=Path)
    ap.add_argument("--workers", default=f"1,{default_workers()}")
    ap.add_argument("--only", default="", help="comma-separated: stdlib, django, effect")
    args = ap.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    if args.one:
        sys.stdout.write(json.dumps(one(args.one, counts[0])) + "\n")
        return
    WORK.mkdir(parents=True, exist_ok=True)
    wanted = set(filter(None, args.only.split(",")))
    bases = [b for key, make in (("stdlib", stdlib_tree), ("django", django_tree), ("effect", effect_tree))
             if not wanted or key in wanted for b in [make()] if b is not None]
    print(f"{os.cpu_count()} cores; parse workers = {default_workers()} by default; chunks stored\n")
    print("| Codebase | Workers | Files | Lines | Wall s | Files/s | Lines/s | CPU main s | CPU workers s |"
          " Peak RSS main MB | Peak RSS worker MB | Load (1 min) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for label, root in bases:
        for w in counts:
            load = os.getloadavg()[0]
            out = subprocess.run([sys.executable, __file__, "--one", str(root), "--workers", str(w)],
                                 capture_output=True, text=True, check=True, env=env).stdout
            r = json.loads(out)
            print(f"| {label} | {w} | {r['files']} | {r['lines']} | {r['seconds']:.1f} |"
                  f" {r['files'] / r['seconds']:.0f} | {r['lines'] / r['seconds']:,.0f} | {r['cpu_main']:.1f} |"
                  f" {r['cpu_workers']:.1f} | {r['rss_main']:.0f} | {r['rss_worker']:.0f} |"
                  f" {load:.1f} → {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
