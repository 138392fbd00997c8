"""Export then import round-trips every field; each import format on small hand-made samples."""

from __future__ import annotations

import io
import json
from pathlib import Path

from desktop.memory.lifecycle.conflict_store import check_on_write, resolve_conflict
from desktop.memory.lifecycle.feedback import RecordUse
from desktop.memory.lifecycle.formats import (
    detect_format,
    export_markdown,
    import_path,
    managed_block,
    parse_markdown,
    write_managed_block,
)
from desktop.memory.lifecycle.portable import export_json, import_json
from desktop.memory.lifecycle.redaction import redact_for_output
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.writer import FnOp

AWS = "AKIAZ7QWERTYUIOPASDF"


def _rich_store(svc: MemoryService, db: Database) -> None:
    full = NewMemory(
        content="Use argon2id for password hashing", type="decision", confidence=0.9, tags=["auth", "security"],
        related_files=["src/auth.py"], related_modules=["auth"], scope="module", source="agent_explicit",
        session_id="s-1", commit_sha="abc123", provenance_session_ids=["s-1", "s-2"],
        provenance=[{"session_id": "s-1", "steps": [3, 4]}], work_unit_ref={"kind": "issue", "id": 7},
        methodology="tdd", target_node_id="node:auth.hash", impacted_node_ids=["node:a", "node:b"],
        decay_half_life_days=365, needs_review=True, citation_text="argon2id for passwords", pinned=True,
        chunk_type="function", chunk_start_line=10, chunk_end_line=20, context_prefix="auth module",
        embedding_model_id="minilm", external_id="ext-1", code_anchors={"src/auth.py": "ff" * 32},
        metadata={"note": "ünïcode ✓", "nested": {"a": [1, 2]}}, candidate=True)
    a = svc.add(full).result().id
    b = svc.add("Don't use argon2id for password hashing", related_files=["src/auth.py"],
                source="agent_explicit").result().id
    check_on_write(db, [b])
    resolve_conflict(db, a, b, "keep_new")  # b deprecated, superseded_by a
    c = svc.add("Verified fact", user_verified=True).result().id
    db.writer.run(RecordUse([a, c]))
    svc.add("Stale memory", source="agent_explicit").result()

    def stale(tx):  # type: ignore[no-untyped-def]
        tx.execute("UPDATE memories SET stale_at = ? WHERE content = 'Stale memory'", (tx.now,))
    db.writer.run(FnOp("stale", stale))


def _export(svc: MemoryService) -> dict:
    buf = io.StringIO()
    export_json(svc, buf)
    return json.loads(buf.getvalue())


def test_json_export_then_import_round_trips_every_field(tmp_path: Path, cdb, svc) -> None:  # type: ignore[no-untyped-def]
    _rich_store(svc, cdb)
    doc = _export(svc)
    columns = {r[1] for r in cdb.reads.conn().execute("PRAGMA table_info(memories)")}
    assert all(columns <= set(rec) for rec in doc["memories"])  # every column is exported
    src = tmp_path / "export.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    with Database(tmp_path / "target.db") as target:
        tsvc = MemoryService(target)
        # The user restoring their own backup on purpose: every flag comes back.
        report = import_json(tsvc, src, trusted=True)
        assert report.added == 4 and report.ok
        back = _export(tsvc)
        again = import_json(tsvc, src, trusted=True)
        assert again.added == 0 and again.unchanged == 4  # idempotent
    for before, after in zip(doc["memories"], back["memories"], strict=True):
        diff = {k for k in before if before[k] != after.get(k)}
        assert diff == {"project_id"}, diff
    by_content = {m["content"]: m for m in back["memories"]}
    assert by_content["Use argon2id for password hashing"]["pinned"] is True
    assert by_content["Don't use argon2id for password hashing"]["deprecated"] is True
    assert by_content["Stale memory"]["status"] == "stale"


def test_import_remaps_relations_when_ids_are_taken(tmp_path: Path, cdb, svc) -> None:  # type: ignore[no-untyped-def]
    _rich_store(svc, cdb)
    src = tmp_path / "export.json"
    src.write_text(json.dumps(_export(svc)), encoding="utf-8")
    with Database(tmp_path / "busy.db") as target:
        tsvc = MemoryService(target)
        for i in range(10):
            tsvc.add(f"pre-existing memory {i}").result()
        report = import_json(tsvc, src)
        assert report.added == 4
        new_ids = set(report.ids)
        for m in tsvc.get_many(report.ids).values():
            assert all(r["id"] in new_ids for r in m.relations)


def test_exports_redact_secrets_on_the_way_out(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    mid = svc.add("deploy key lives in vault").result().id

    def sneak(tx):  # type: ignore[no-untyped-def]  # a secret that got in before the scanner knew it
        tx.execute("UPDATE memories SET content = ? WHERE id = ?", (f"aws key {AWS} for deploys", mid))
    cdb.writer.run(FnOp("sneak", sneak))
    assert AWS not in json.dumps(_export(svc))
    assert AWS not in export_markdown(cdb) and AWS not in managed_block(cdb)
    assert "[REDACTED:" in redact_for_output(f"key={AWS}") and redact_for_output("plain") == "plain"


def test_markdown_and_managed_block_reimport(tmp_path: Path, cdb, svc) -> None:  # type: ignore[no-untyped-def]
    svc.add("Use argon2 for passwords", type="decision", pinned=True, related_files=["auth.py"]).result()
    svc.add("Run `make test` before pushing.\nIt needs docker.", type="workflow_recipe").result()
    md = export_markdown(cdb, project_name="demo")
    assert "## Decisions" in md and "📌 Use argon2" in md
    (tmp_path / "memories.md").write_text(md, encoding="utf-8")
    claude = tmp_path / "CLAUDE.md"
    claude.write_text("# Demo\n\nKeep this hand-written line.\n", encoding="utf-8")
    assert write_managed_block(claude, managed_block(cdb))
    assert not write_managed_block(claude, managed_block(cdb))  # same block: untouched
    text = claude.read_text(encoding="utf-8")
    assert text.startswith("# Demo\n\nKeep this hand-written line.") and text.count("engram:begin") == 1
    agents = tmp_path / "AGENTS.md"
    write_managed_block(agents, managed_block(cdb))
    for path in (tmp_path / "memories.md", claude, agents):
        with Database(tmp_path / f"{path.stem}.db") as target:
            tsvc = MemoryService(target)
            report = import_path(tsvc, path)
            assert report.added == 2, path
            pinned = tsvc.list()[-1]
            # A file's claim to be pinned is not the user's word: imported, unpinned.
            assert pinned.type == "decision" and not pinned.pinned and pinned.related_files == ["auth.py"]
            assert pinned.source == "imported" and pinned.confidence <= 0.6
            recipe = tsvc.list()[0]
            assert recipe.content == "Run `make test` before pushing.\nIt needs docker."
            assert import_path(tsvc, path).added == 0


SAMPLES = {
    "MEMORY.md": "# Project memory\n\n## Gotchas\n- The dev server needs PORT=3000\n- Tests are flaky on CI\n\n"
                 "## Commands\n1. `npm run build` builds everything\n",
    "CLAUDE.md": "# CLAUDE.md\n\nThis repo uses pnpm workspaces.\n\n## Conventions\n- Prefer named exports\n"
                 "- Keep components small\n",
    "AGENTS.md": "# Agents\n\n## Decisions\n- We use PostgreSQL 16\n",
    "copilot-instructions.md": "Always write tests with vitest.\n\n```ts\nexpect(x).toBe(1)\n```\n",
    ".cursorrules": "- Use TypeScript strict mode\n- Avoid default exports\n",
}


def test_import_other_tools_files(tmp_path: Path, cdb, svc) -> None:  # type: ignore[no-untyped-def]
    for name, text in SAMPLES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    expected = {"MEMORY.md": 3, "CLAUDE.md": 3, "AGENTS.md": 1, "copilot-instructions.md": 1, ".cursorrules": 2}
    for name, count in expected.items():
        report = import_path(svc, tmp_path / name)
        assert report.added == count, (name, report)
    gotcha = svc.list(limit=100, order="oldest")[0]
    assert gotcha.content == "The dev server needs PORT=3000" and gotcha.type == "gotcha"
    assert gotcha.source == "imported" and gotcha.external_id.startswith("claude-memory:MEMORY.md:")
    # A code block illustrates; it is neither a rule nor glued to the sentence before it.
    block = next(m for m in svc.list(limit=100) if m.content.startswith("Always write tests"))
    assert block.content == "Always write tests with vitest."
    assert detect_format(tmp_path / "MEMORY.md") == "claude-memory"


def test_import_cline_memory_bank_and_cursor_rules(tmp_path: Path, cdb, svc) -> None:  # type: ignore[no-untyped-def]
    bank = tmp_path / "proj" / "memory-bank"
    bank.mkdir(parents=True)
    (bank / "systemPatterns.md").write_text("# System Patterns\n\n- Repository pattern for data access\n")
    (bank / "activeContext.md").write_text("# Active Context\n\nWorking on the billing page.\n")
    (bank / "techContext.md").write_text("# Tech Context\n\n- React 18 with Vite\n")
    rules = tmp_path / "proj" / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "react.mdc").write_text("---\ndescription: React rules\nglobs: src/**/*.tsx\nalwaysApply: true\n"
                                     "---\n\n- Use function components\n- Use hooks for state\n")
    assert detect_format(tmp_path / "proj" / "memory-bank") == "cline"
    report = import_path(svc, tmp_path / "proj", "cline")
    assert report.added == 3
    by_text = {m.content: m for m in svc.list(limit=50)}
    assert by_text["Repository pattern for data access"].type == "pattern"
    assert by_text["Working on the billing page."].type == "work_state"
    report = import_path(svc, rules)
    assert report.added == 2
    rule = {m.content: m for m in svc.list(limit=50)}["Use function components"]
    assert not rule.pinned and rule.source == "imported" and "cursor" in rule.tags
    assert rule.metadata["cursor_rule"]["globs"] == "src/**/*.tsx"


def test_parse_markdown_keeps_nested_lists_with_their_item() -> None:
    items = parse_markdown("## Setup\n- Install deps\n  - with pnpm\n  - not npm\n- Run dev\n")
    assert [i.content for i in items] == ["Install deps\n- with pnpm\n- not npm", "Run dev"]
    assert items[0].heading == "Setup"
