"""Secrets never reach a page, an export or a log (issue 27, items 9-12, 14, 15), through each door.

The doors are real: ``engram hook`` processes with Claude Code's payloads and transcripts,
the MCP tools, the CLI (add, index, export, delete-all, forget --hard --leaked). Every test
failed on the code before the fix (checked with ``git stash``); what each proves is in its name.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.agents.mcp_server import EngramMCP
from desktop.cli.main import main as cli
from desktop.composition import Engram
from desktop.memory.privacy.secrets import redact, scan
from desktop.memory.store.errors import SecretRefusedError
from desktop.memory.store.guards import guard_text
from desktop.settings import Settings
from tests.security.conftest import fire
from tests.security.test_redaction_boundary import _every_stored_text, _file_bytes
from tests.security.transcript import ClaudeTranscript

PW = "Zq8rT3mpLe9x"  # one password, hidden in every form below; no fragment of it may be stored
#: (text, what must not survive) for each form the scanner missed before (item 9).
FORMS = [
    (f"export PGPASSWORD={PW}; psql -h db.internal -U app prod", PW),
    (f"mysql -h db.internal -uroot -p{PW} shop < dump.sql", PW),
    (f"mysqldump -u root -p'{PW}' shop > backup.sql", PW),
    (f"redis-cli -h cache.internal -a {PW} FLUSHALL", PW),
    (f"curl -u deploy:{PW} https://ci.internal/api/builds", PW),
    (f"The staging box: login admin/{PW} (ask before using it)", PW),
    (f"DATABASE_URL=postgres://app:{PW[:6]}/{PW[6:]}@db.internal:5432/prod", f"{PW[:6]}/{PW[6:]}"),
    ("HMAC_KEY=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
     "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("secret_key_base: 4e8b1f0c2d7a9e6b3c5d8f1a0b2c4d6e8f9a1b3c5d7e9f0a2b4c6d8e0f1a3b5c",
     "4e8b1f0c2d7a9e6b3c5d8f1a0b2c4d6e8f9a1b3c5d7e9f0a2b4c6d8e0f1a3b5c"),
]
LOOK_ALIKES = [
    "the login page/form lives in views/login.py",
    "Check the login/logout flow after the refactor",
    "mysql -p shop   (it asks for the password)",
    "mysql -P 3306 -h db.internal",
    "redis-cli -a $REDIS_PASSWORD ping",
    "curl -u $CI_USER:$CI_TOKEN https://ci.internal",
    "see https://github.com:443/org/repo/blob/main/x@y",
    "http://localhost:8000/api?email=a@b.com",
    "cache_key = 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit_sha: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "COMPASS=northwest",
]


@pytest.fixture
def shop(payments_dir: Path, data_dir: Path) -> Iterator[Any]:
    project = Engram(Settings(data_dir=data_dir)).open_project(payments_dir, remember=False)
    yield project
    project.close()


def _cli(root: Path, data: Path, *args: str) -> int:
    return cli([*args, "--project", str(root), "--data-dir", str(data)])


def _leaks(db: Any, *needles: str) -> list[str]:
    """The needles found in any stored text or in the database files' bytes (WAL included)."""
    text = _every_stored_text(db)
    raw = _file_bytes(Path(db.path))
    return [n for n in needles if n in text or n.lower() in text.lower() or n.encode() in raw]


@pytest.mark.parametrize(("text", "secret"), FORMS, ids=range(len(FORMS)))
def test_item9_each_missed_form_is_found_and_redacted(text: str, secret: str) -> None:
    out, found = redact(text)
    assert found and secret not in out and PW[:6] not in out, out


@pytest.mark.parametrize("text", LOOK_ALIKES, ids=range(len(LOOK_ALIKES)))
def test_item9_look_alikes_stay_clean(text: str) -> None:
    assert scan(text) == [], scan(text)


def test_item9_no_door_stores_them(shop: Any, hook_env: dict[str, str], payments_dir: Path, data_dir: Path,
                                   tmp_path: Path) -> None:
    """MCP record, a live after-tool hook, a transcript at session end, the code index and an export."""
    mcp = EngramMCP(shop)
    try:
        for text, _ in FORMS:
            mcp.record_memory(f"Deploy note: {text}", type="note")
    finally:
        mcp.close()
    for i, (text, _) in enumerate(FORMS):
        fire(hook_env, "after-tool", payments_dir, "live-1", tool_name="Bash", tool_use_id=f"t{i}",
              tool_input={"command": text}, tool_response={"stdout": f"ran: {text}", "stderr": ""})
    said = ClaudeTranscript("tr-1", payments_dir).user(f"Deploy with this: {FORMS[0][0]}")
    for text, _ in FORMS:
        said.tool("Bash", {"command": text}, f"error: could not connect ({text})", error=True)
    said.say(f"It failed because {FORMS[4][0]} is rejected.")
    fire(hook_env, "session-end", payments_dir, "tr-1", transcript_path=str(said.write(tmp_path / "tr-1.jsonl")))
    (payments_dir / "deploy.sh").write_text("\n".join(t for t, _ in FORMS) + "\n", encoding="utf-8")
    assert _cli(payments_dir, data_dir, "index") == 0
    export = tmp_path / "out.json"
    assert _cli(payments_dir, data_dir, "export", "--format", "json", "--output", str(export)) == 0
    assert "deploy.sh" in _every_stored_text(shop.db)  # the file was indexed, its secrets were not
    secrets = [s for _, s in FORMS]
    assert _leaks(shop.db, *secrets) == []
    assert not [s for s in secrets if s in export.read_text(encoding="utf-8")]


URL = f"postgres://app:{PW}@db.internal:5432/prod"


def _around(cut: int, at: int) -> str:
    """A prompt whose URL puts its ``@`` ``at`` characters past position ``cut``."""
    before = "Please look at why the payments export fails on the staging database. " * 10
    lead = cut + at - URL.index("@")
    return (before[:lead] + URL + " - it times out after 30 seconds.") if lead > 0 else URL


@pytest.mark.parametrize("at", [0, 1, 3, 6])
def test_item10_a_cut_never_keeps_half_a_secret(shop: Any, hook_env: dict[str, str], payments_dir: Path,
                                                tmp_path: Path, at: int) -> None:
    """The prompt hook's ledger detail (cut at 200) and the session metrics' first prompt (cut at 300),
    with the URL's ``@`` just past each cut."""
    shop.memories.add("The payments export runs against the staging database nightly.", type="note").result(10)
    for cut in (200, 300):
        prompt = _around(cut, at)
        fire(hook_env, "prompt", payments_dir, f"p-{cut}-{at}", prompt=prompt)
        path = ClaudeTranscript(f"m-{cut}-{at}", payments_dir).user(prompt).say("Looking into it.").write(
            tmp_path / f"m-{cut}.jsonl")
        fire(hook_env, "session-end", payments_dir, f"m-{cut}-{at}", transcript_path=str(path))
    rows = shop.db.reads.conn().execute("SELECT count(*) FROM external_injections").fetchall()
    assert rows[0][0] >= 1  # the prompt hook did show the memory (so its ledger detail exists)
    assert _leaks(shop.db, PW[:6]) == []


def test_item11_hook_logs_are_redacted_private_and_scrubbed(hook_env: dict[str, str], payments_dir: Path,
                                                            data_dir: Path, tmp_path: Path) -> None:
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 3
    leak = "Blue-Horse-Battery-Staple"  # no format the scanner could know: the user names it
    # A Codex session in a folder that is no Engram project: the hook logs where it was called from.
    stray = tmp_path / f"work OPENAI_API_KEY={key} PGPASSWORD={PW} {leak}"
    stray.mkdir()
    fire(hook_env, "prompt", stray, "c-1", prompt="hello")
    log = data_dir / "logs" / "hooks.log"
    text = log.read_text(encoding="utf-8")
    assert "not an Engram project" in text and leak in text
    assert key not in text and PW not in text
    assert stat.S_IMODE(log.stat().st_mode) == 0o600 and stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    shop = Engram(Settings(data_dir=data_dir)).open_project(payments_dir, remember=False)
    try:
        mid = shop.memories.add("The export job runs nightly.", type="note").result(10).id
    finally:
        shop.close()
    assert _cli(payments_dir, data_dir, "forget", str(mid), "--hard", "--leaked", leak) == 0
    assert leak not in log.read_text(encoding="utf-8")
    fire(hook_env, "prompt", stray, "c-2", prompt="hello again")
    assert "not an Engram project" in log.read_text(encoding="utf-8")
    assert _cli(payments_dir, data_dir, "delete-all", "--yes") == 0
    assert log.read_text(encoding="utf-8") == ""


def test_item12_forget_leaked_erases_the_lower_cased_copies(shop: Any, hook_env: dict[str, str],
                                                            payments_dir: Path, data_dir: Path,
                                                            tmp_path: Path) -> None:
    leak = "Tango-Foxtrot-Ledger-42"  # the user knows it leaked; no format names it
    path = (ClaudeTranscript("l-1", payments_dir)
            .user("Why does the payments export fail?")
            .tool("Read", {"file_path": str(payments_dir / "core" / "payments.py")}, "def charge(amount): ...")
            .say(f"Actually, the export was signing with {leak} instead of the rotated key in core/payments.py.")
            .say(f"Root cause found: core/payments.py signs the export with {leak}, the retired signing secret.")
            .write(tmp_path / "l-1.jsonl"))
    fire(hook_env, "session-end", payments_dir, "l-1", transcript_path=str(path))
    assert leak.lower() in _every_stored_text(shop.db)  # the observer keeps lower-cased keys
    mid = shop.memories.add("The export is signed at the end of the nightly job.", type="note").result(10).id
    assert _cli(payments_dir, data_dir, "forget", str(mid), "--hard", "--leaked", leak) == 0
    assert leak.lower() not in _every_stored_text(shop.db).lower()
    assert leak.lower().encode() not in _file_bytes(Path(shop.db.path)).lower()


def test_item14_the_index_never_follows_a_link_out_of_the_project(shop: Any, payments_dir: Path, data_dir: Path,
                                                                  tmp_path: Path) -> None:
    from desktop.memory.observer.start_context import expand_command

    outside = tmp_path / "home" / ".pgpass"
    outside.parent.mkdir(exist_ok=True)
    outside.write_text(f"db.internal:5432:prod:app:{PW}\n", encoding="utf-8")
    (payments_dir / "config").mkdir()
    os.symlink(outside, payments_dir / "config" / "pgpass.py")
    (payments_dir / "core" / "inside.py").symlink_to(payments_dir / "core" / "payments.py")  # inside: still read
    assert _cli(payments_dir, data_dir, "index") == 0
    assert _leaks(shop.db, PW) == []
    files = {r[0] for r in shop.db.reads.conn().execute("SELECT file_path FROM graph_files")}
    assert "core/inside.py" in files and "config/pgpass.py" not in files
    # The same for a slash command's file (its text feeds the session start's prefetch plan).
    (payments_dir / ".claude" / "commands").mkdir(parents=True)
    os.symlink(outside, payments_dir / ".claude" / "commands" / "deploy.md")
    assert PW not in expand_command("/deploy", payments_dir, tmp_path / "nohome")


def test_item15_a_refused_secret_is_echoed_nowhere(payments_dir: Path, data_dir: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from desktop.ui.messages import describe_error

    token = "ghp_" + "Zq8rT3mp" * 5
    typed = f"Deploy with the bot token {token} and the DB at postgres://app:{PW}@db.internal/prod"
    assert _cli(payments_dir, data_dir, "add", typed) != 0
    said = capsys.readouterr()
    with pytest.raises(SecretRefusedError) as refused:
        guard_text(typed, user_taught=True)
    assert "secret" in (said.out + said.err).lower()
    for shown in (said.out + said.err, str(refused.value), refused.value.excerpt, describe_error(refused.value)):
        for secret in (token, PW):
            assert not any(secret[i:i + 4] in shown for i in range(len(secret) - 3)), shown
    assert json.loads(json.dumps({"excerpt": refused.value.excerpt}))  # printable as it is
