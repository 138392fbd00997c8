"""Every door gets the same upkeep: a memory written from the CLI, the MCP server or an agent run
is checked for conflicts and anchored to the files it names, and `engram mcp` brings the code
graph up to date. Each test runs the real process and reads the database after it exits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from desktop.composition import Engram
from desktop.memory.lifecycle.maintenance import anchor_unanchored
from desktop.settings import Settings

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    (root / "api").mkdir(parents=True)
    (root / "api" / "db.py").write_text("def connect():\n    return pool.get()\n", encoding="utf-8")
    (root / "api" / "views.py").write_text("from api.db import connect\n\ndef index():\n    return connect()\n",
                                           encoding="utf-8")
    return root, tmp_path / "data"


def _cli(root: Path, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop.cli.main", *args, "--project", str(root),
                           "--data-dir", str(data)], cwd=REPO, env=ENV, capture_output=True, text=True,
                          timeout=120, check=True)


def _inspect(root: Path, data: Path) -> Any:
    return Engram(Settings(data_dir=data)).open_project(root, remember=False, maintain=False)


def _contradicts(project: Any, mid: int) -> list[int]:
    return [r["id"] for r in project.memories.get(mid).relations if r.get("type") == "contradicts"]


def test_cli_add_is_anchored_and_conflict_checked_before_the_process_exits(tmp_path: Path) -> None:
    root, data = _project(tmp_path)
    first = json.loads(_cli(root, data, "add", "--json", "--type", "decision", "--file", "api/db.py",
                            "Always use the async client in api/db.py").stdout)["id"]
    second = json.loads(_cli(root, data, "add", "--json", "--type", "decision", "--file", "api/db.py",
                             "Never use the async client in api/db.py").stdout)["id"]
    project = _inspect(root, data)
    try:
        assert set(project.memories.get(first).code_anchors) == {"api/db.py"}
        assert set(project.memories.get(second).code_anchors) == {"api/db.py"}
        assert _contradicts(project, second) == [first]
    finally:
        project.close()
    out = json.loads(_cli(root, data, "check-stale", "--json").stdout)
    assert out["checked"] == 2  # before upkeep ran in the CLI this said 0


def test_check_stale_anchors_memories_written_before_upkeep(tmp_path: Path) -> None:
    root, data = _project(tmp_path)
    project = Engram(Settings(data_dir=data)).open_project(root, remember=False, maintain=False)
    try:
        mid = project.memories.add("connect() reuses the pool", related_files=["api/db.py"]).result(10).id
        assert project.memories.get(mid).code_anchors == {}
        assert anchor_unanchored(project.db, root) == 1
        assert set(project.memories.get(mid).code_anchors) == {"api/db.py"}
        assert anchor_unanchored(project.db, root) == 0
    finally:
        project.close()


def test_agent_run_memory_is_anchored(tmp_path: Path) -> None:
    root, data = _project(tmp_path)
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([
        {"text": "Noting it.", "tool_calls": [{"name": "record_memory", "arguments": {
            "content": "connect() in api/db.py must reuse the shared pool, never open a new socket",
            "type": "gotcha", "files": ["api/db.py"]}}]},
        {"text": "Done: connect() reuses the pool."},
    ]), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "desktop.cli.main", "run", "--project", str(root), "--data-dir",
                    str(data), "--provider", "scripted", "--script", str(script), "--group", "full",
                    "look at connect() in api/db.py"], cwd=REPO, env=ENV, capture_output=True, text=True,
                   timeout=180)
    project = _inspect(root, data)
    try:
        about = [m for m in project.memories.list(limit=50, order="recent") if "shared pool" in m.content]
        assert about, "the agent's record_memory was not promoted"
        assert set(about[0].code_anchors) == {"api/db.py"}, (about[0].related_files, about[0].source, about[0].type)
    finally:
        project.close()


def test_mcp_record_is_anchored_and_the_graph_is_indexed_at_start(tmp_path: Path) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    root, data = _project(tmp_path)
    seed = Engram(Settings(data_dir=data)).open_project(root, remember=False)
    old = seed.memories.add("Always use the async client in api/db.py", type="decision",
                            related_files=["api/db.py"]).result(10).id
    seed.close()
    params = StdioServerParameters(command=sys.executable, cwd=str(REPO), env=ENV,
                                   args=["-m", "desktop.cli.main", "mcp", "--project", str(root),
                                         "--data-dir", str(data)])

    async def body() -> str:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("record_memory", {
                "content": "Never use the async client in api/db.py", "type": "decision", "files": ["api/db.py"]})
            deadline = time.monotonic() + 60  # the server indexes the graph in the background
            impact = ""
            while time.monotonic() < deadline:
                impact = "\n".join(getattr(c, "text", "") for c in
                                   (await session.call_tool("analyze_impact", {"target": "api/db.py"})).content)
                if "api/views.py" in impact:
                    break
                await anyio.sleep(0.3)
            return "\n".join(getattr(c, "text", "") for c in result.content) + "\n" + impact
    out = anyio.run(body)
    assert "api/views.py" in out  # the graph was indexed by `engram mcp` itself
    project = _inspect(root, data)
    try:
        new = [m for m in project.memories.list(limit=50, order="recent") if m.content.startswith("Never use")]
        assert new and set(new[0].code_anchors) == {"api/db.py"}
        assert _contradicts(project, new[0].id) == [old]
    finally:
        project.close()
