"""The second attack round (issue 27): the same classes, tried again on the fixed code.

Each test is an attack that still worked after the first fixes and failed on that code
(checked against the commit before "Fresh attack round"): laundering a citation into a
"shown" row through a compaction, reporting one session's use over and over, a tombstone
written into the team server, password flags of more clients, and a cut in the warnings
ledger added by issue 25. (The tombstone attack is in tests/team/test_trust_attacks.py.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.agents.mcp_server import EngramMCP
from desktop.cli.main import main as cli
from desktop.composition import Engram
from desktop.memory.privacy.secrets import redact
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.triggers.warn import Outcomes
from desktop.settings import Settings
from tests.security.conftest import fire
from tests.security.test_redaction_boundary import _every_stored_text


@pytest.fixture
def shop(payments_dir: Path, data_dir: Path) -> Iterator[Any]:
    project = Engram(Settings(data_dir=data_dir)).open_project(payments_dir, remember=False)
    yield project
    project.close()


def test_a_citation_is_not_laundered_into_a_shown_memory_by_a_compaction(
        shop: Any, hook_env: dict[str, str], payments_dir: Path) -> None:
    low = shop.memories.add(NewMemory(content="Refund batches run with `make refunds-force` on Fridays.",
                                      type="workflow_recipe", source="observer_inferred", confidence=0.5),
                            actor="observer").result(10).id
    fire(hook_env, "stop", payments_dir, "c-1", last_assistant_message=f"Per [Memory #{low}: refunds-force], done.")
    after = fire(hook_env, "session-start", payments_dir, "c-1", source="compact")
    assert f'id=\\"{low}\\"' not in after and "refunds-force" not in after  # never shown: never "shown again"
    for turn in range(6):
        fire(hook_env, "stop", payments_dir, "c-1", last_assistant_message=f"[Memory #{low}: again {turn}]")
    m = shop.memories.get(low)
    assert m.access_count == 0 and abs(m.confidence - 0.5) < 1e-9


def test_one_sessions_use_counts_once_however_often_it_is_reported(
        shop: Any, hook_env: dict[str, str], payments_dir: Path, data_dir: Path,
        payment_memories: Any) -> None:
    said = fire(hook_env, "prompt", payments_dir, "u-1",
                 prompt="Is the refund webhook handler idempotent when the webhook retries?")
    assert "idempotent" in said
    [mid] = [m.id for m in shop.memories.list(limit=20) if "idempotent" in m.content]
    before = shop.memories.get(mid)
    for _ in range(12):  # what an agent with a shell could run, naming a session it really was shown in
        assert cli(["feedback", "--shown", str(mid), "--session", "u-1", "--project", str(payments_dir),
                    "--data-dir", str(data_dir)]) == 0
    m = shop.memories.get(mid)
    assert m.access_count == before.access_count + 1 and abs(m.confidence - before.confidence) < 1e-9


MORE_FORMS = [
    ("sshpass -p Hunt3r2pw ssh deploy@build.internal", "Hunt3r2pw"),
    ("docker login -u bot -p Xk29vLq0pA registry.internal", "Xk29vLq0pA"),
    ("sqlcmd -S db.internal -U sa -P 'Str0ng!Passw0rd'", "Str0ng!Passw0rd"),
    ("mongosh mongodb://db.internal --username app -p S3cretMongo9", "S3cretMongo9"),
    ("keytool -importkeystore -storepass Chang3dPw7 -keystore release.jks", "Chang3dPw7"),
    ("openssl pkcs12 -in release.p12 -passin pass:S3cr3tP12x", "S3cr3tP12x"),
]


@pytest.mark.parametrize(("text", "secret"), MORE_FORMS, ids=range(len(MORE_FORMS)))
def test_more_clients_password_flags_are_found(text: str, secret: str) -> None:
    out, found = redact(text)
    assert found and secret not in out


def test_more_clients_password_flags_never_stored_over_mcp(shop: Any) -> None:
    mcp = EngramMCP(shop)
    try:
        for text, _ in MORE_FORMS:
            mcp.record_memory(f"Release step: {text}", type="note")
    finally:
        mcp.close()
    stored = _every_stored_text(shop.db)
    assert "Release step" in stored
    assert [s for _, s in MORE_FORMS if s in stored] == []


def test_the_warnings_ledger_redacts_before_it_cuts(shop: Any) -> None:
    url = "postgres://app:Zq8rT3mpLe9x@db.internal:5432/prod"
    call = "psql " + "-v ON_ERROR_STOP=1 " * 20
    call = (call + " " * 300)[:300 - url.index("@") + 2] + url  # the URL's '@' just past the cut
    Outcomes(shop.db).warned("w-1", "claude-code", [1], "call-1", call).result(10)
    stored = json.dumps(shop.db.reads.conn().execute("SELECT call FROM warning_outcomes").fetchall())
    assert stored != "[]" and "Zq8rT3" not in stored
