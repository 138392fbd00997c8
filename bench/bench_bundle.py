"""Issue 9 benchmark: size of the frozen app, cold start to first window, idle memory.

Build first (``bash packaging/build.sh``), then run:

    .venv/bin/python bench/bench_bundle.py [--app dist/engram] [--runs 5] [--memories 10000]

* **Bundle size**: the one-folder build on disk (target <= 300 MB on Linux) and its
  15 largest parts (top-level folders/files of the bundle) and 15 largest files.
* **Cold start**: wall time from spawning the executable to its first shown main
  window, reported by the entry point's ``ENGRAM_STARTUP_PROBE=window`` hook; each
  run is a fresh process. "cold" runs drop the OS page cache first (needs root; else
  skipped and said so), "warm" runs do not.
* **Idle memory**: resident memory (RSS) of the app idling with a project of
  ``--memories`` memories open (created with ``engram import``), and with no project.

The display is a private Xvfb (the real xcb plugin) when Xvfb is installed, else
Qt's offscreen platform. Prints Markdown tables; ``--json`` also writes raw numbers.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, table

log = logging.getLogger("engram.packaging")

PROBE_PREFIX = "ENGRAM_PROBE"
SIZE_TARGET_MB = 300.0
MB = 1024 * 1024


# --------------------------------------------------------------------------------------
# Size
# --------------------------------------------------------------------------------------
def tree_size(path: Path) -> int:
    """Bytes of a file or of every file under a folder (symlinks not followed)."""
    if path.is_symlink():
        return 0
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def bundle_parts(app: Path) -> list[tuple[str, int]]:
    """Top-level parts of the bundle (children of _internal/, plus the executable), largest first.

    Qt's folder is split one level further (libraries, plugins, bindings), because
    as one entry it would hide what makes it big.
    """
    internal = app / "_internal"
    roots = [internal] if internal.is_dir() else [app]
    parts: list[tuple[str, int]] = []
    for root in roots:
        for child in root.iterdir():
            if child.name == "PySide6" and child.is_dir():
                for sub in child.iterdir():
                    if sub.name == "Qt" and sub.is_dir():
                        parts += [(str(q.relative_to(app)), tree_size(q)) for q in sub.iterdir()]
                    else:
                        parts.append((str(sub.relative_to(app)), tree_size(sub)))
            else:
                parts.append((str(child.relative_to(app)), tree_size(child)))
    parts += [(p.name, tree_size(p)) for p in app.iterdir() if p.is_file()]
    return sorted(parts, key=lambda item: -item[1])


def largest_files(app: Path, n: int) -> list[tuple[str, int]]:
    """The `n` largest single files of the bundle."""
    files = [(str(p.relative_to(app)), p.stat().st_size) for p in app.rglob("*")
             if p.is_file() and not p.is_symlink()]
    return sorted(files, key=lambda item: -item[1])[:n]


# --------------------------------------------------------------------------------------
# Running the frozen app
# --------------------------------------------------------------------------------------
class Display:
    """A private Xvfb server (xcb, like a desktop) or Qt's offscreen platform."""

    def __init__(self, mode: str) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.env: dict[str, str] = {}
        xvfb = shutil.which("Xvfb")
        if mode == "xvfb" or (mode == "auto" and xvfb):
            if not xvfb:
                raise SystemExit("Xvfb is not installed")
            number = 90 + os.getpid() % 100
            self.proc = subprocess.Popen([xvfb, f":{number}", "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.0)
            self.env = {"DISPLAY": f":{number}", "QT_QPA_PLATFORM": "xcb"}
            self.name = "xcb on Xvfb"
        else:
            self.env = {"QT_QPA_PLATFORM": "offscreen"}
            self.name = "offscreen"

    def close(self) -> None:
        """Stop Xvfb if this object started it."""
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


def drop_page_cache() -> bool:
    """Drop the OS page cache so the next start reads the bundle from disk (root only)."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def run_probe(exe: Path, env: dict[str, str], probe: str, args: list[str], timeout: float = 300
              ) -> tuple[float, dict[str, dict[str, object]]]:
    """Start `exe` with ENGRAM_STARTUP_PROBE=`probe`; return (wall seconds to first window, probe events)."""
    full_env = {**os.environ, **env, "ENGRAM_STARTUP_PROBE": probe}
    start = time.perf_counter()
    proc = subprocess.Popen([str(exe), *args], env=full_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    events: dict[str, dict[str, object]] = {}
    first_window = float("nan")
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if not line.startswith(PROBE_PREFIX):
                continue
            data = json.loads(line[len(PROBE_PREFIX):])
            if data["event"] == "first_window":
                first_window = time.perf_counter() - start
            events[str(data["event"])] = data
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    stderr = proc.stderr.read() if proc.stderr else ""
    if code != 0 or "first_window" not in events:
        raise RuntimeError(f"{exe} exited with {code} (events {events}):\n{stderr[-2000:]}")
    return first_window, events


def make_project(memories: int, data_dir: Path, project: Path) -> float:
    """Create a project with `memories` memories through the `engram import` CLI; return seconds."""
    rng = random.Random(9)
    words = ("cache", "migration", "token", "retry", "parser", "index", "session", "schema", "worker",
             "queue", "lock", "config", "build", "deploy", "auth", "login", "router", "handler", "timeout",
             "vector", "memory", "graph", "module", "test", "fixture")
    kinds = ("note", "gotcha", "decision", "pattern", "preference")
    project.mkdir(parents=True, exist_ok=True)
    (project / "README.md").write_text("# bench project\n")
    jsonl = data_dir.parent / "memories.jsonl"
    with jsonl.open("w", encoding="utf-8") as fh:
        for i in range(memories):
            text = " ".join(rng.choice(words) for _ in range(rng.randint(8, 30)))
            fh.write(json.dumps({"content": f"#{i} {text}", "type": rng.choice(kinds),
                                 "tags": [rng.choice(words)]}) + "\n")
    cli = Path(sys.executable).parent / "engram"
    command = [str(cli)] if cli.exists() else [sys.executable, "-m", "desktop.cli.main"]
    start = time.perf_counter()
    subprocess.run([*command, "import", "--project", str(project), "--data-dir", str(data_dir), str(jsonl)],
                   check=True, capture_output=True)
    return time.perf_counter() - start


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    """Measure and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", type=Path, default=ROOT / "dist" / "engram", help="the one-folder build")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--display", choices=("auto", "xvfb", "offscreen"), default="auto")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    app = args.app.resolve()
    exe = next((app / name for name in ("engram-desktop", "Engram", "Engram.exe") if (app / name).exists()), None)
    if exe is None:
        raise SystemExit(f"no frozen app in {app}: run `bash packaging/build.sh` first")
    results: dict[str, object] = {"app": str(app)}

    # -- size ----------------------------------------------------------------------------
    total = tree_size(app)
    parts = bundle_parts(app)
    files = largest_files(app, 15)
    results["size_bytes"] = total
    results["parts"] = parts[:15]
    results["largest_files"] = files

    display = Display(args.display)
    work = Path(tempfile.mkdtemp(prefix="engram-bench-bundle-"))
    try:
        # -- cold start ------------------------------------------------------------------
        starts: dict[str, list[float]] = {"cold": [], "warm": []}
        inside: dict[str, list[float]] = {"cold": [], "warm": []}
        can_drop = True
        for kind in ("cold", "warm"):
            for i in range(args.runs):
                if kind == "cold":
                    can_drop = drop_page_cache()
                    if not can_drop:
                        break
                data = work / f"start-{kind}-{i}"
                wall, events = run_probe(exe, {**display.env, "ENGRAM_DATA_DIR": str(data)}, "window", [])
                starts[kind].append(wall)
                inside[kind].append(float(events["first_window"]["seconds"]))  # type: ignore[arg-type]
                log.info("%s start %d: %.3f s", kind, i + 1, wall)
        results["starts"] = starts
        results["starts_in_process"] = inside

        # -- idle memory -----------------------------------------------------------------
        data_dir = work / "data"
        project = work / "project"
        import_s = make_project(args.memories, data_dir, project)
        log.info("imported %d memories in %.1f s", args.memories, import_s)
        idle_env = {**display.env, "ENGRAM_DATA_DIR": str(data_dir)}
        _, with_project = run_probe(exe, idle_env, f"idle:{args.idle_seconds}", [str(project)])
        _, empty = run_probe(exe, {**display.env, "ENGRAM_DATA_DIR": str(work / "empty")},
                             f"idle:{args.idle_seconds}", [])
        results["idle"] = {"project": with_project, "empty": empty, "import_seconds": import_s}
    finally:
        display.close()
        shutil.rmtree(work, ignore_errors=True)

    # -- tables --------------------------------------------------------------------------
    print(f"\n### Bundle size ({sys.platform}, {app.name}/)\n")
    verdict = "meets" if total / MB <= SIZE_TARGET_MB else "MISSES"
    print(table(["bundle", "size (MB)", "target (MB)", "verdict"],
                [[app.name, round(total / MB, 1), SIZE_TARGET_MB, verdict]]))
    print("\n### Largest parts of the bundle\n")
    print(table(["part", "MB", "share"],
                [[f"`{name}`", round(size / MB, 1), f"{100 * size / total:.1f}%"] for name, size in parts[:15]]))
    print("\n### Largest files\n")
    print(table(["file", "MB"], [[f"`{name}`", round(size / MB, 1)] for name, size in files]))
    print(f"\n### Start-up to first shown window ({display.name}, fresh process per run)\n")
    rows = []
    for kind, label in (("cold", "cold (page cache dropped)"), ("warm", "warm (files cached)")):
        values = starts[kind]
        if not values:
            rows.append([label, "n/a (dropping the page cache needs root)", "", "", ""])
            continue
        rows.append([label, len(values), round(statistics.median(values), 3), round(min(values), 3),
                     round(statistics.median(inside[kind]), 3)])
    print(table(["start", "runs", "median (s)", "min (s)", "median in Python (s)"], rows))
    print(f"\n### Memory at idle ({display.name}, after {args.idle_seconds:.0f} s idle)\n")
    idle = results["idle"]
    assert isinstance(idle, dict)
    mem_rows = []
    for key, label in (("project", f"{args.memories:,} memories open"), ("empty", "no project")):
        event = idle[key]["idle"]
        opened = idle[key].get("project_open", {}).get("seconds", "")
        mem_rows.append([label, round(event["rss_bytes"] / MB, 1), round(event["peak_rss_bytes"] / MB, 1),
                         opened if key == "project" else "—"])
    print(table(["state", "RSS (MB)", "peak RSS (MB)", "project open at (s)"], mem_rows))
    print(f"\n(project created with `engram import` of {args.memories:,} memories in "
          f"{idle['import_seconds']:.1f} s)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
