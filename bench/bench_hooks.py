"""Hook round trip and cold CLI start, as an agent experiences them (issues 16 and 25).

Measures, at 10,000 memories (200 of them lessons with triggers), the wall time from starting
``engram hook EVENT`` (a new process, stdin JSON in, JSON out) to its exit, for session start,
prompt submit, before a tool call (a shell command that matches a lesson, an edit, an MCP tool's
call) and after one, with the warm service (``engram serve``) running and without it (inline FTS5);
and ``engram list`` cold (process start to exit). Targets: p95 <= 150 ms with the service and <= 400 ms
without for session start and prompt; <= 60 ms and <= 250 ms for the tool events (they run on
every tool call); ``engram list`` <= 250 ms.

    .venv/bin/python bench/bench_hooks.py [--memories 10000] [--runs 40] [--client PATH]

``--client``: time an installed ``engram`` (a wheel in a venv of its own, compiled, no editable
finder) as the hook process, answering inline and with the service running (the service is the
source tree's).

Prints a Markdown table (with the machine load) for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_store import make_memory
from common import ROOT, summary, table

from desktop.agents.hooks.client import socket_path
from desktop.composition import Engram
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.triggers.model import COMMAND, EDIT, Trigger
from desktop.settings import Settings


def _env(data: Path, service: bool) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ENGRAM_DATA_DIR": str(data)}
    env.pop("ENGRAM_HOOK_NO_SERVICE", None)
    if not service:
        env["ENGRAM_HOOK_NO_SERVICE"] = "1"
    return env


def _run(cmd: list[str], env: dict[str, str], stdin: str = "") -> tuple[float, str]:
    t = time.perf_counter()
    # From this tree's folder: ``python -m`` puts the working folder first on sys.path, so started from
    # another checkout the service and ``engram list`` would run that checkout's code.
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, check=False, cwd=ROOT)
    return (time.perf_counter() - t) * 1000, done.stdout


#: A 40-line edit of Go code, as agents write them (shapes are computed for every line).
_GO_EDIT = "\n".join(f"\tv{i}, err := store.Load{i}(ctx, id)\n\tif err != nil {{\n\t\treturn fmt.Errorf(\"load: %w\", "
                     f"err)\n\t}}" for i in range(10))


def _lesson(i: int) -> NewMemory:
    """A learned lesson with a command trigger and one about a kind of file (as issue 25 stores them)."""
    trig = [Trigger(COMMAND, f"tool{i % 50}", (f"run{i % 7}",), (f"--flag{i % 3}",)).as_json(),
            Trigger(EDIT, ".go", path=f"pkg{i % 9}").as_json(),
            # a construct a checker flagged (kind "code": code older than issue 25's third session skips it)
            {"kind": "code", "key": f"w, _ := w{i % 20}("},
            # an argument a non-shell tool refused (kind "tool": code older than the twelfth session skips it)
            {"kind": "tool", "key": f"mcp__tracker{i % 10}__create_ticket", "tokens": [f"queue=Ops{i % 3}"]}]
    return NewMemory(content=f"`tool{i % 50} run{i % 7} --flag{i % 3}` fails here (lesson {i}); use --other.",
                     type="gotcha", source="observer_inferred", confidence=0.85,
                     metadata={"signal": "command_fix", "triggers": trig})


def main() -> None:
    """Build the project, time each case, print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--client", default=None, help="an installed engram to run as the hook (service rows only)")
    ap.add_argument("--warm-search", action="store_true",
                    help="let the service build hybrid search (embeds every memory first: minutes at 10,000)")
    args = ap.parse_args()
    # An installed Engram has its bytecode compiled (pip does it at install time); a source tree
    # run with PYTHONDONTWRITEBYTECODE=1 would otherwise compile ~60 modules in every hook process.
    import compileall

    compileall.compile_dir(str(ROOT / "desktop"), quiet=1)
    tmp = Path(tempfile.mkdtemp(prefix="engram-bench-hooks-"))
    data, root = tmp / "data", tmp / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    project = Engram(Settings(data_dir=data)).open_project(root, remember=False)
    rng = random.Random(16)
    lessons = 200
    for start in range(0, args.memories - lessons, 500):
        project.memories.add_many([make_memory(rng, i) for i in range(start, min(args.memories - lessons,
                                                                                 start + 500))]).result(600)
    project.memories.add_many([_lesson(i) for i in range(lessons)]).result(600)
    project.close()
    exe = [sys.executable, "-m", "desktop.cli.main"]
    words = ["refund", "webhook", "retries", "handler", "idempotent", "cache", "invalidation", "payments", "rounding"]
    payloads = {
        "session-start": lambda n: {"session_id": f"b-{n}", "cwd": str(root), "hook_event_name": "SessionStart",
                                    "source": "startup"},
        "prompt": lambda n: {"session_id": f"b-{n}", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                             "prompt": " ".join(rng.sample(words, 4))},
        "before-tool": lambda n: {"session_id": f"b-{n}", "cwd": str(root), "hook_event_name": "PreToolUse",
                                  "tool_name": "Bash", "tool_use_id": f"u{n}",
                                  "tool_input": {"command": f"tool{n % 50} run{n % 7} --flag{n % 3} x 2>&1 | tail"}},
        "before-tool (edit)": lambda n: {"session_id": f"b-{n}", "cwd": str(root), "hook_event_name": "PreToolUse",
                                         "tool_name": "Edit", "tool_use_id": f"e{n}",
                                         "tool_input": {"file_path": str(root / f"pkg{n % 9}" / "mod.go"),
                                                        "old_string": "a", "new_string": "b"}},
        "before-tool (code edit)": lambda n: {"session_id": f"b-{n}", "cwd": str(root),
                                              "hook_event_name": "PreToolUse", "tool_name": "Edit",
                                              "tool_use_id": f"c{n}",
                                              "tool_input": {"file_path": str(root / f"pkg{n % 9}" / "mod.go"),
                                                             "old_string": "a", "new_string": _GO_EDIT}},
        # An MCP tool's call: its arguments are what a tool-argument lesson looks at (two calls in three match one).
        "before-tool (MCP tool)": lambda n: {"session_id": f"b-{n}", "cwd": str(root),
                                             "hook_event_name": "PreToolUse", "tool_name":
                                             f"mcp__tracker{n % 10}__create_ticket", "tool_use_id": f"m{n}",
                                             "tool_input": {"title": f"Export fails on run {n}", "queue":
                                                            f"Ops{n % 3 if n % 3 else 5}", "priority": 2}},
        "after-tool": lambda n: {"session_id": "b-after", "cwd": str(root), "hook_event_name": "PostToolUse",
                                 "tool_name": "Bash", "tool_use_id": f"p{n}",
                                 "tool_input": {"command": "go test ./..."},
                                 "tool_response": {"stdout": "ok  \tpkg\t0.2s\n" * 20, "exit_code": 0}},
        # An edit that succeeded: the session's untested change is read, written when it flips.
        "after-tool (edit)": lambda n: {"session_id": "b-after", "cwd": str(root), "hook_event_name": "PostToolUse",
                                        "tool_name": "Edit", "tool_use_id": f"q{n}",
                                        "tool_input": {"file_path": str(root / f"pkg{n % 9}" / ("mod_test.go" if n % 4
                                                       == 3 else "mod.go")), "old_string": "a", "new_string": "b"},
                                        "tool_response": {"filePath": str(root / f"pkg{n % 9}" / "mod.go")}},
    }
    # The hook as agents run it: the command ``engram hooks install`` writes (``launch.hook_argv``:
    # the interpreter isolated and without ``site``, on Engram's hook entry point).
    from desktop.agents.launch import hook_argv

    hook_exe = [args.client] if args.client else hook_argv()
    rows = []
    for service in (False, True):
        env = _env(data, service)
        # An installed client imports its own copy, never the source tree's.
        hook_env = {k: v for k, v in env.items() if k != "PYTHONPATH"} if args.client else env
        server = None
        if service:
            warm = [] if args.warm_search else ["--no-warm-search"]
            server = subprocess.Popen([*exe, "serve", "--data-dir", str(data), "--idle", "600", *warm], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
            while not socket_path(data).exists():
                time.sleep(0.05)
            _run([*exe, "hook", "prompt", "--data-dir", str(data)], env, json.dumps(payloads["prompt"](0)))
        try:
            for case, make in payloads.items():
                event = case.split(" ")[0]
                times = []
                shown = 0
                for n in range(args.runs):
                    body = make(n)
                    body["session_id"] = f"{body['session_id']}-{'warm' if service else 'inline'}"
                    ms, out = _run([*hook_exe, "hook", event, "--data-dir", str(data)], hook_env, json.dumps(body))
                    times.append(ms)
                    shown += bool(out.strip())
                p50, p95, worst = summary(times)
                tool = "tool" in event
                target = (60 if service else 250) if tool else (150 if service else 400)
                event = case
                mode = "running" if service else "not running (FTS5 inline)"
                if args.client:
                    mode += ", installed client"
                rows.append([event, mode, args.runs, p50, p95,
                             worst, target, "yes" if p95 <= target else "no", f"{shown}/{args.runs}"])
        finally:
            if server is not None:
                server.terminate()
                server.wait(10)
    if args.client:
        print(f"{args.memories:,} memories; load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores); "
              f"hook client {args.client}\n")
        print(table(["case", "service", "runs", "p50 ms", "p95 ms", "max ms", "target p95", "met", "printed"], rows))
        return
    env = _env(data, False)
    times = [_run([*exe, "list", "--project", str(root), "--data-dir", str(data), "--limit", "20"], env)[0]
             for _ in range(args.runs)]
    p50, p95, worst = summary(times)
    rows.append(["`engram list` (cold)", "-", args.runs, p50, p95, worst, 250, "yes" if p95 <= 250 else "no", "-"])
    for label, cmd in (("`python -c pass` (interpreter + site, incl. the editable-install finder)", ["-c", "pass"]),
                       ("`python -S -c pass` (bare interpreter)", ["-S", "-c", "pass"])):
        base = [_run([sys.executable, *cmd], env)[0] for _ in range(args.runs)]
        p50, p95, worst = summary(base)
        rows.append([label, "-", args.runs, p50, p95, worst, "-", "-", "-"])
    print(f"{args.memories:,} memories; load average {os.getloadavg()[0]:.2f} "
          f"({os.cpu_count()} cores); python {sys.version.split()[0]}\n")
    print(table(["case", "service", "runs", "p50 ms", "p95 ms", "max ms", "target p95", "met", "printed"], rows))


if __name__ == "__main__":
    main()
