"""``engram mcp`` answers the handshake before anything heavy loads, says what the SDK would say, and every
failure reaches the client as a tool error (issue 28, item 3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from desktop.agents.mcp_catalog import CAPABILITIES, HANDSHAKE_VERSIONS, INSTRUCTIONS, MEMORY_TYPES, static_result
from desktop.memory.types import MemoryType
from tests.agents.conftest import add

REPO = Path(__file__).resolve().parents[2]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def test_the_catalog_says_what_the_sdk_server_says(project: Any) -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from desktop.agents.mcp_server import EngramMCP, build_server

    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    assert set(MEMORY_TYPES) == {t.value for t in MemoryType}
    impl = EngramMCP(project)
    try:
        server = build_server(impl)
        tools = anyio.run(server.list_tools)
        resources = anyio.run(server.list_resources)
        options = server._lowlevel_server.create_initialization_options()
    finally:
        impl.close()
    sdk_tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]
    assert sdk_tools == static_result("tools/list", None)["tools"]  # type: ignore[index]
    assert all("outputSchema" not in t for t in sdk_tools)  # plain text results, no {"result": ...} copy
    sdk_resources = [r.model_dump(by_alias=True, exclude_none=True, mode="json") for r in resources]
    assert sdk_resources == static_result("resources/list", None)["resources"]  # type: ignore[index]
    caps = options.capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert {k: v for k, v in caps.items() if v != {}} == CAPABILITIES  # an empty "extensions" is not sent
    assert options.instructions == INSTRUCTIONS


def test_initialize_is_answered_without_importing_the_sdk_or_the_store() -> None:
    code = ("import io, json, sys\n"
            "from desktop.agents.mcp_front import Front, Wire\n"
            "out = io.BytesIO()\n"
            f"Front(Wire(out)).handle(json.dumps({INIT!r}).encode())\n"
            "reply = json.loads(out.getvalue())\n"
            "assert reply['id'] == 1 and reply['result']['serverInfo']['name'] == 'engram', reply\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'pydantic', 'anyio', "
            "'apsw', 'numpy') or m in ('desktop.composition', 'desktop.agents.mcp_server'))\n"
            "print(json.dumps(heavy))\n")
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


class _Session:
    """``engram mcp`` in a folder, spoken to line by line."""

    def __init__(self, cwd: Path, data_dir: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen([sys.executable, "-P", "-m", "desktop.cli.main", "mcp", "--data-dir",
                                      str(data_dir)], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.replies: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def reply(self, msg_id: int) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            found = next((r for r in self.replies if r.get("id") == msg_id), None)
            if found is not None:
                return found
            line = self.proc.stdout.readline()
            assert line, self.proc.stderr.read().decode() if self.proc.stderr else ""
            self.replies.append(json.loads(line))

    def call(self, msg_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}})
        return self.reply(msg_id)

    def close(self) -> list[dict[str, Any]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        try:
            self.replies += [json.loads(line) for line in self.proc.stdout.read().splitlines() if line.strip()]
            assert self.proc.wait(60) == 0
        finally:
            self.proc.stdout.close()
            if self.proc.stderr is not None:
                self.proc.stderr.close()
        return self.replies


def _text(reply: dict[str, Any]) -> str:
    return "\n".join(c.get("text", "") for c in reply["result"]["content"])


def test_a_session_in_the_project_folder(project: Any) -> None:
    pinned = add(project, "Deploys go through make release only", type="requirement", pinned=True)
    add(project, "To release: bump the version, then run make release.", type="workflow_recipe")
    session = _Session(Path(project.info.root) / "core", project.settings.data_dir)  # a subfolder finds it
    try:
        started = time.monotonic()
        session.send(INIT)
        init = session.reply(1)
        answered = time.monotonic() - started
        session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        found = session.call(2, "search_memory", {"query": "deploys release"})
        recipe = session.call(3, "get_workflow_recipe", {"task": "release"})
        impact = session.call(4, "analyze_impact", {"target": "core/no_such_file.py"})
        bad_args = session.call(5, "search_memory", {"query": "x", "limit": 0})
        unknown = session.call(6, "no_such_tool", {})
        forget_user = session.call(7, "forget", {"memory_id": pinned})
    finally:
        replies = session.close()
    assert init["result"]["protocolVersion"] == "2025-06-18"
    assert answered < 30  # the bound that matters (<= 1 s) is measured in bench/bench_mcp.py
    assert [r for r in replies if r.get("id") == 1] == [init]  # the SDK's own answer to it was dropped
    # plain text with citations, no structured copy
    assert "structuredContent" not in found["result"] and not found["result"]["isError"]
    assert _text(found).startswith(f"[Memory #{pinned}] (requirement, pinned) Deploys go through")
    assert "[Memory #" in _text(recipe) and "make release" in _text(recipe)
    # every failure is a tool error the model can read
    for reply in (impact, bad_args, unknown, forget_user):
        assert reply["result"]["isError"] is True, reply
    assert "no_such_file" in _text(impact) and "belongs to the user" in _text(forget_user)


def test_outside_every_project_each_call_says_what_to_do(tmp_path: Path) -> None:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    session = _Session(folder, tmp_path / "data")
    try:
        session.send(INIT)
        assert session.reply(1)["result"]["serverInfo"]["name"] == "engram"
        listed = session.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) or session.reply(2)
        called = session.call(3, "search_memory", {"query": "anything"})
        session.send({"jsonrpc": "2.0", "id": 4, "method": "resources/read",
                      "params": {"uri": "engram://memories/pinned"}})
        read = session.reply(4)
    finally:
        session.close()
    assert len(listed["result"]["tools"]) == 6
    assert called["result"]["isError"] is True and "engram setup" in _text(called)
    assert "engram setup" in read["error"]["message"]
    assert not (tmp_path / "data" / "projects").exists() or not any((tmp_path / "data" / "projects").iterdir())
