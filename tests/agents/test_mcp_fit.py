"""What an MCP client (the SDK's, as the Inspector sees it) learns from Engram's server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from desktop import __version__
from tests.agents.conftest import add
from tests.agents.test_mcp_server import _params, _text


async def _session(project: Any, body: Any) -> Any:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    async with stdio_client(_params(project)) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        return init, await body(session)


def test_tools_describe_themselves_and_fail_with_engrams_message(project: Any) -> None:
    # An agent may pin what the observer measured (a recipe), never an agent's word.
    known = add(project, "Deploy with `make release` from the project root.", type="workflow_recipe",
                source="observer_inferred")

    async def body(s: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": {t.name: t for t in (await s.list_tools()).tools}}
        out["bad_type"] = await s.call_tool("record_memory", {"content": "x is y", "type": "banana"})
        out["missing"] = await s.call_tool("pin", {"memory_id": 987654})
        out["ok"] = await s.call_tool("pin", {"memory_id": known})
        out["recorded"] = await s.call_tool("record_memory", {"content": "tests need redis", "type": "gotcha"})
        return out
    init, out = anyio.run(_session, project, body)
    assert init.server_info.name == "engram" and init.server_info.version == __version__
    tools = out["tools"]
    search = tools["search_memory"]
    assert search.annotations.read_only_hint is True and search.annotations.destructive_hint is False
    assert tools["forget"].annotations.destructive_hint is True
    assert tools["record_memory"].annotations.read_only_hint is False
    for tool in tools.values():
        props = tool.input_schema["properties"]
        assert all(p.get("description") for p in props.values()), (tool.name, props)
    assert "candidate" in tools["record_memory"].description
    assert "dead_end" in tools["record_memory"].input_schema["properties"]["type"]["description"]

    bad = out["bad_type"]
    assert bad.is_error and "banana" in _text(bad) and "gotcha" in _text(bad) and "dead_end" in _text(bad)
    missing = out["missing"]
    # the SDK prefixes "Error executing tool pin: "; Engram's own message follows it (not a bare crash)
    assert missing.is_error and _text(missing).endswith("Memory #987654 does not exist.")
    assert not out["ok"].is_error and project.memories.get(known).pinned
    assert not out["recorded"].is_error and "candidate" in _text(out["recorded"])


def test_print_config_team_entries_are_portable_user_entries_absolute(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Files meant for the team hold no machine path and pin no project; the user's own entries run this
    installation by its absolute path, serve any project and keep a non-default data folder."""
    from desktop.agents.launch import engram_argv
    from desktop.cli.main import main

    data = tmp_path / "data"
    assert main(["mcp", "--data-dir", str(data), "--print-config"]) == 0
    cfg = json.loads(capsys.readouterr().out)
    assert set(cfg) == {"claude-code", "codex", "gemini", "cursor"}
    shared = json.dumps([c["project"] for c in cfg.values()])
    assert str(tmp_path) not in shared and str(Path.home()) not in shared and sys.executable not in shared
    assert cfg["claude-code"]["project"]["json"]["mcpServers"]["engram"] == {"command": "engram", "args": ["mcp"]}
    assert cfg["gemini"]["project"]["json"]["mcpServers"]["engram"] == {"command": "engram", "args": ["mcp"]}
    assert 'command = "engram"' in cfg["codex"]["project"]["toml"]
    assert "${workspaceFolder}" in json.dumps(cfg["cursor"]["project"])
    mine = cfg["gemini"]["user"]["json"]["mcpServers"]["engram"]
    assert mine["command"] == engram_argv()[0] and Path(mine["command"]).is_absolute()
    assert mine["args"][-3:] == ["mcp", "--data-dir", str(data.resolve())] and "--project" not in mine["args"]
    assert cfg["claude-code"]["user"]["command"].startswith("claude mcp add --scope user engram -- /")
    assert "[mcp_servers.engram]" in cfg["codex"]["user"]["toml"] and "--data-dir" in cfg["codex"]["user"]["toml"]
