"""What an MCP client (the SDK's, as the Inspector sees it) learns from Engram's server."""

from __future__ import annotations

import json
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
    known = add(project, "Deploys go through make release only", type="requirement", source="agent_explicit")

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


def test_print_config_keeps_data_dir_and_scope(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.cli.main import main

    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "engram"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    data = tmp_path / "data"
    assert main(["mcp", "--project", str(tmp_path), "--data-dir", str(data), "--print-config"]) == 0
    cfg = json.loads(capsys.readouterr().out)
    entry = cfg["claude-code"]["json"]["mcpServers"]["engram"]
    # This installation's own entry point, never whatever `engram` a PATH finds (issue 27: a
    # relative PATH entry could name a repository's script).
    from desktop.agents.launch import engram_argv

    assert entry["command"] == engram_argv()[0] and Path(entry["command"]).is_absolute()
    assert entry["args"][-2:] == ["--data-dir", str(data.resolve())]
    assert cfg["claude-code"]["command"].startswith("claude mcp add --scope project engram -- ")
    assert "--data-dir" in cfg["codex"]["toml"]
