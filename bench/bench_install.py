"""From nothing to a session that receives a memory, per agent; MCP initialize; doctor on a broken setup (issue 28).

* **install**: in a fresh HOME with the pinned CLIs on PATH, the wall time of ``engram setup --agent A``
  in a fresh git project, ``engram add --pin`` of one memory, then one real session (``claude -p``,
  ``codex exec``, ``gemini -p`` against the local fake model servers of tests/hooks/) whose first model
  request must carry that memory; the user's steps are counted as commands typed.
* **mcp**: wall time from starting ``engram mcp`` to its answer to ``initialize``, in an Engram project;
  interleaved with the SDK-first server of before (SDK import and project open, then the handshake).

    .venv/bin/python bench/bench_install.py [--runs 20] [--sessions 3]

Prints Markdown for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, percentile, table

sys.path.insert(0, str(ROOT))

from tests.agents.fake_sse import Turn
from tests.hooks.conftest import CLI_CACHE
from tests.hooks.fake_gemini import FakeGemini, GeminiTurn
from tests.hooks.fake_model import ScriptedClaudeModel
from tests.hooks.fake_responses import CodexTurn, FakeResponses

MEMORY = "All money amounts are integer cents; never use floats for prices."
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
OLD_SERVER = ("import sys\nfrom pathlib import Path\nfrom desktop.composition import Engram\n"
              "from desktop.settings import Settings\nfrom desktop.agents.mcp_framing import run_framed\n"
              "from desktop.agents.mcp_server import EngramMCP, build_server\n"
              "p = Engram(Settings.load()).open_project(Path.cwd(), remember=False)\n"
              "run_framed(build_server(EngramMCP(p)))\n")


def _env(tmp: Path) -> dict[str, str]:
    home = tmp / "home"
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    script = f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -P -m desktop.cli.main \"$@\"\n"
    (bindir / "engram").write_text(script)
    (bindir / "engram").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "GEMINI_"))}
    env.update({"HOME": str(home), "CODEX_HOME": str(home / ".codex"), "ENGRAM_DATA_DIR": str(tmp / "data"),
                "PATH": f"{bindir}:{CLI_CACHE / 'node_modules' / '.bin'}:{env['PATH']}", "PYTHONPATH": str(ROOT),
                "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "GEMINI_CLI_TRUST_WORKSPACE": "true"})
    return env


def _project(tmp: Path) -> Path:
    root = tmp / "shop"
    (root / "core").mkdir(parents=True)
    (root / "core" / "payments.py").write_text("def charge(amount):\n    return amount * 100\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _run(env: dict[str, str], cwd: Path, *argv: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(argv), env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]}: {done.stdout[-500:]}{done.stderr[-500:]}")
    return done


def _session(agent: str, env: dict[str, str], root: Path) -> str:
    """One real session; the text of its first model request."""
    bin_dir = CLI_CACHE / "node_modules" / ".bin"
    if agent == "claude-code":
        with ScriptedClaudeModel(lambda body, n: Turn("Done.")) as model:
            _run({**env, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-test"}, root,
                 str(bin_dir / "claude"), "-p", "Look at the charge code.", "--model", model.model)
            return model.all_text(0)
    if agent == "gemini":
        settings = Path(env["HOME"]) / ".gemini" / "settings.json"
        data = json.loads(settings.read_text()) if settings.exists() else {}
        settings.write_text(json.dumps({**data, "security": {"auth": {"selectedType": "gemini-api-key"}}}))
        with FakeGemini(lambda body, n: GeminiTurn("Done.")) as model:
            _run({**env, "GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": model.url}, root,
                 str(bin_dir / "gemini"), "-p", "Look at the charge code.", "-m", "gemini-2.5-flash")
            return model.text_of(0)
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.write_text(config.read_text() + f'\n[projects."{root}"]\ntrust_level = "trusted"\n')
    with FakeResponses(lambda body, n: CodexTurn("Done.")) as model:
        provider = f'{{name="fake", base_url="{model.url}/v1", wire_api="responses"}}'
        _run(env, root, str(bin_dir / "codex"), "exec", "--skip-git-repo-check", "-c", "model_provider=fake", "-c",
             f"model_providers.fake={provider}", "-m", "fake-model", "--dangerously-bypass-approvals-and-sandbox",
             "--dangerously-bypass-hook-trust", "Look at the charge code.")
        return model.text_of(0)


def bench_install(agent: str) -> tuple[float, float, bool]:
    """(seconds of setup + add, seconds of the first session, the session received the memory)."""
    with tempfile.TemporaryDirectory(prefix="engram-install-", ignore_cleanup_errors=True) as name:
        tmp = Path(name)
        env, root = _env(tmp), _project(tmp)
        started = time.monotonic()
        _run(env, root, "engram", "setup", "--agent", agent)
        _run(env, root, "engram", "add", "--pin", "--type", "decision", MEMORY)
        set_up = time.monotonic() - started
        first = _session(agent, env, root)
        return set_up, time.monotonic() - started - set_up, "integer cents" in first


def _initialize_s(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((INIT + "\n").encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    took = time.monotonic() - started
    assert b'"serverInfo"' in line, line
    proc.stdin.close()
    proc.wait(60)
    proc.stdout.close()
    return took


def bench_mcp(runs: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="engram-mcp-") as name:
        tmp = Path(name)
        env, root = _env(tmp), _project(tmp)
        _run(env, root, "engram", "add", MEMORY)
        out: dict[str, list[float]] = {"front (this branch)": [], "SDK first (before)": []}
        for _ in range(runs):
            out["front (this branch)"].append(_initialize_s([sys.executable, "-P", "-m", "desktop.cli.main", "mcp"],
                                                            root, env))
            out["SDK first (before)"].append(_initialize_s([sys.executable, "-P", "-c", OLD_SERVER], root, env))
        return out


def main() -> None:
    """Run the three measurements and print the tables."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--only", choices=["install", "mcp"], default=None)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    if args.only in (None, "mcp"):
        times = bench_mcp(args.runs)
        print(table(["server", "n", "initialize p50 s", "p95 s", "max s"],
                    [[k, len(v), f"{percentile(v, 50):.3f}", f"{percentile(v, 95):.3f}", f"{max(v):.3f}"]
                     for k, v in times.items()]))
    if args.only in (None, "install"):
        rows = []
        for agent in ("claude-code", "gemini", "codex"):
            results = [bench_install(agent) for _ in range(args.sessions)]
            rows.append([agent, len(results), f"{percentile([r[0] for r in results], 50):.1f}",
                         f"{percentile([r[1] for r in results], 50):.1f}",
                         f"{percentile([r[0] + r[1] for r in results], 50):.1f}",
                         f"{sum(r[2] for r in results)}/{len(results)}"])
        print(table(["agent", "n", "setup + add s (p50)", "first session s (p50)", "total s (p50)",
                     "sessions told the memory"], rows))
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
