"""Issue 14, fuzzing: hypothesis on the record schema, the transcript importers and the MCP request loop.

Bounded: each property runs a fixed, small number of examples with no per-example
deadline (the shared CI box is slow), derandomised so a failure reproduces.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.agents.mcp_framing import INVALID_REQUEST, PARSE_ERROR, check_line
from desktop.memory.lifecycle.formats import import_path
from desktop.memory.lifecycle.portable import import_jsonl, record_to_new_memory
from desktop.memory.observer.claude_code import import_claude_code, import_claude_stream_json
from desktop.memory.observer.codex import import_codex_exec_json, import_codex_rollout
from desktop.memory.observer.gemini import import_gemini_chat
from desktop.memory.observer.sniff import import_any
from desktop.memory.service import MemoryService
from desktop.memory.store.database import Database
from desktop.memory.store.errors import EngramError, ValidationError
from desktop.memory.store.rows import MemoryQuery

FAST = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SLOW = settings(max_examples=12, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

_scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
            | st.floats(allow_nan=True) | st.text(max_size=40) | st.just("lone \ud800 surrogate"))
_json = st.recursive(_scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c,
                                                                                  max_size=4), max_leaves=12)
_FIELDS = ["content", "type", "confidence", "tags", "related_files", "related_modules", "scope", "source",
           "session_id", "commit_sha", "relations", "work_unit_ref", "methodology", "decay_half_life_days",
           "needs_review", "user_verified", "citation_text", "pinned", "candidate", "chunk_start_line",
           "chunk_end_line", "context_prefix", "external_id", "code_anchors", "metadata", "created_at",
           "provenance", "impacted_node_ids", "unknown_key"]
_records = st.dictionaries(st.sampled_from(_FIELDS), _json, max_size=8).map(
    lambda d: {**d, "content": d["content"]} if "content" in d else {**d, "content": "a fact about the cache"})


@FAST
@given(_records)
def test_record_schema_refuses_cleanly_or_accepts(record: dict[str, Any]) -> None:
    try:
        item = record_to_new_memory(record)
    except ValidationError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert isinstance(item.content, str) and item.content.strip()
    assert 0.0 <= float(item.confidence) <= 1.0


@SLOW
@given(st.lists(_records, min_size=1, max_size=25))
def test_import_keeps_good_lines_and_the_store_stays_usable(records: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "m.jsonl"
        src.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
        with Database(Path(tmp) / "e.db") as db:
            svc = MemoryService(db)
            report = import_jsonl(svc, src)
            assert report.added + report.unchanged + len(report.rejected) == len(records)
            assert all(1 <= n <= len(records) for n, _ in report.rejected)
            # whatever was stored reads back, lists, counts and searches without error
            for m in svc.list(limit=100):
                assert m.content
            svc.count(MemoryQuery(text="cache"))
            svc.list(MemoryQuery(text="fact"), order="confidence")
            # the restore door (a JSON export) takes the same records the same way
            export = Path(tmp) / "e.json"
            export.write_text(json.dumps({"memories": records}), encoding="utf-8")
            again = import_path(svc, export)
            assert again.added + again.unchanged + len(again.rejected) == len(records)
            svc.list(limit=100)


_line_text = st.one_of(st.text(max_size=200), _json.map(json.dumps),
                       st.sampled_from(['{"type":"user"', "[" * 3000, '{"type":"assistant","message":{}}',
                                        '{"timestamp":"x","type":"response_item","payload":[]}']))


@SLOW
@given(st.lists(_line_text, max_size=20), st.binary(max_size=64))
def test_transcript_importers_never_raise(lines: list[str], junk: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass") + b"\n" + junk)
        for importer in (import_any, import_claude_code, import_claude_stream_json, import_codex_exec_json,
                         import_codex_rollout, import_gemini_chat):
            try:
                importer(path)
            except EngramError:
                pass  # a known, worded refusal is fine; a traceback is not


@FAST
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300), _json.map(json.dumps),
                 st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]),
                                 _json, max_size=6).map(json.dumps)))
def test_mcp_framing_answers_every_line(line: bytes | str) -> None:
    good, reply = check_line(line)
    assert (good is None) != (reply is None)
    if reply is not None:
        msg = json.loads(reply)
        assert msg["jsonrpc"] == "2.0" and msg["error"]["code"] in (PARSE_ERROR, INVALID_REQUEST)
        assert msg["id"] is None or isinstance(msg["id"], (str, int))
    else:
        assert good is not None
        msg = json.loads(good)
        assert isinstance(msg, dict) and msg["jsonrpc"] == "2.0"
        good.encode("utf-8")  # no lone surrogate reaches the SDK


@FAST
@given(_records)
def test_restore_record_schema_refuses_cleanly_or_accepts(record: dict[str, Any]) -> None:
    from desktop.memory.lifecycle.restore import normalise_record

    columns = ["id", "type", "content", "confidence", "tags", "related_files", "metadata", "source", "pinned",
               "code_anchors", "decay_half_life_days", "chunk_start_line", "relations", "work_unit_ref"]
    try:
        values = normalise_record(record, columns, "2026-01-01T00:00:00.000Z")
    except ValidationError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert values["source"] == "imported" and values["pinned"] == 0


_stamp = st.one_of(st.integers(min_value=-(2**80), max_value=2**80), st.floats(), st.text(max_size=30),
                   st.sampled_from(["9999999-01-01", "2026-02-30T00:00:00Z", "0001-01-01T00:00:00"]))


@SLOW
@given(st.lists(st.tuples(_stamp, _json), min_size=1, max_size=8))
def test_ingest_of_hostile_claude_code_transcripts_never_raises(rows: list[tuple[Any, Any]]) -> None:
    from desktop.memory.observer.ingest import Ingestor
    from desktop.memory.observer.novelty import HashingEmbedder, Novelty
    from desktop.memory.observer.promotion import Promoter

    lines = []
    for i, (stamp, payload) in enumerate(rows):
        lines.append({"type": "assistant", "sessionId": "fz", "uuid": f"a{i}", "timestamp": stamp, "cwd": "/p",
                      "message": {"role": "assistant", "content": [
                          {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": payload}}]}})
        lines.append({"type": "user", "sessionId": "fz", "uuid": f"u{i}", "timestamp": stamp, "cwd": "/p",
                      "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": f"t{i}", "content": payload, "is_error": True}]}})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fz.jsonl"
        path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
        with Database(Path(tmp) / "e.db") as db:
            Ingestor(db, Promoter(db, novelty=Novelty(HashingEmbedder()))).ingest_file(path)
