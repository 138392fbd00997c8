"""Coding agents' own folders are not project code (issue 28, item 6): the hook settings Engram
itself writes (with this machine's paths) never become file nodes, chunks or modules."""

from __future__ import annotations

import json
from pathlib import Path

from store_helpers import opened, write

AGENT_FILES = {
    ".claude/settings.local.json": json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "/home/someone/.venv/bin/engram hook stop --agent claude-code"}]}]}}),
    ".claude/hooks/guard.py": "import sys\n\ndef main():\n    sys.exit(0)\n",
    ".codex/hooks.json": "{}\n",
    ".codex/config.toml": "[features]\nhooks = true\n",
    ".gemini/settings.json": "{}\n",
    ".gemini/extensions/engram/gemini-extension.json": "{}\n",
    ".cursor/mcp.json": "{}\n",
    ".agents/plugins/marketplace.json": "{}\n",
}


def test_agent_folders_are_skipped_by_the_indexer_and_module_detection(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, {"core/pay.py": "from core.util import f\n\ndef pay():\n    return f()\n",
                 "core/util.py": "def f():\n    return 1\n", **AGENT_FILES})
    with opened(tmp_path, root, chunks=True) as (db, ix, q):
        rep = ix.run()
        reasons = dict(rep.skipped_files)
        for folder in (".claude/", ".codex/", ".gemini/", ".cursor/", ".agents/"):
            assert reasons[folder] == "agent settings", reasons
        conn = db.reads.conn()
        files = {r[0] for r in conn.execute("SELECT file_path FROM graph_files")}
        assert files == {"core/pay.py", "core/util.py"}
        modules = {m["name"] for m in q.modules()["modules"]}
        assert not any(name.startswith(".") and name != "." for name in modules), modules
        chunks = " ".join(r[0] for r in conn.execute("SELECT content FROM memories"))
        assert "/home/someone" not in chunks and "guard.py" not in chunks


def test_a_change_in_an_agent_folder_is_not_indexed_live(tmp_path: Path) -> None:
    from desktop.memory.graph.walk import IgnoreRules

    rules = IgnoreRules(tmp_path)
    assert rules.reason(".claude/settings.json", False) == "agent settings"
    assert rules.reason("sub/.gemini/settings.json", False) == "agent settings"
    assert rules.reason("claude/settings.json", False) is None  # a project folder named like an agent
