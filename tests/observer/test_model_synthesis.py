"""Model synthesis from session evidence, against local fakes of the real model APIs.

Each test runs the real observer, promotion, writer and SQLite file; only the model
is a fake, a 127.0.0.1 server speaking the Anthropic, OpenAI or Ollama protocol. The
model may invent a file or a command, answer malformed JSON, go off-schema or time
out: what it invents is dropped, what it breaks costs nothing already learned.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.agents.json_model import ProviderJSONModel, synthesis_model
from desktop.agents.providers.anthropic_provider import AnthropicProvider
from desktop.agents.providers.ollama_provider import OllamaProvider
from desktop.agents.providers.openai_compat import OpenAICompatProvider
from desktop.composition import Engram
from desktop.memory.observer.evidence import SessionEvidence
from desktop.memory.observer.ingest import Ingestor
from desktop.memory.observer.model_synthesis import (
    ModelSynthesizer,
    SynthesisRejected,
    parse_reply,
    ungrounded,
)
from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.store.database import Database
from desktop.settings import Settings
from tests.agents.fake_anthropic import MODEL as ANTHROPIC_MODEL
from tests.agents.fake_anthropic import FakeAnthropic
from tests.agents.fake_ollama import MODEL as OLLAMA_MODEL
from tests.agents.fake_ollama import FakeOllama, text_turn
from tests.agents.fake_openai import MODEL as OPENAI_MODEL
from tests.agents.fake_openai import FakeOpenAI
from tests.agents.fake_sse import Turn
from tests.observer.obs_helpers import Seq

KEY = "sk-test-key"


def session(sid: str = "s1", t0: float = 1_700_000_000.0) -> list[Any]:
    """A session that shows a user rule, a failing then a working test command, and an edit."""
    return (Seq(sid, t0=t0)
            .user("Always run the specs with `pytest --spec` from the project root, never plain pytest.")
            .read("bookminder/cli.py")
            .bash("npm test", output="npm ERR! missing script: test", error=True)
            .bash("npm run test:unit", output="12 passing")
            .edit("bookminder/cli.py")
            .bash("pytest --spec", output="5 passed")
            .end("success"))


def memory(content: str, *, files: list[str] | None = None, commands: list[str] | None = None,
           values: list[str] | None = None, kind: str = "workflow_recipe") -> dict[str, Any]:
    return {"type": kind, "content": content, "files": files or [], "commands": commands or [],
            "values": values or []}


GOOD = memory("Run the unit tests with `npm run test:unit`; `npm test` has no script here.",
              commands=["npm run test:unit", "npm test"])
INVENTED_FILE = memory("Deployment goes through `deploy/release.sh` after the tests pass.",
                       files=["deploy/release.sh"])
INVENTED_COMMAND = memory("Lint before committing with the project's make target.", commands=["make lint"])


@pytest.fixture(autouse=True)
def _close_models(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every model a test builds is closed when the test ends (its provider's sockets with it)."""
    made: list[ProviderJSONModel] = []

    class Closed(ProviderJSONModel):
        def __init__(self, provider: Any) -> None:
            super().__init__(provider)
            made.append(self)
    monkeypatch.setattr(sys.modules[__name__], "ProviderJSONModel", Closed)
    yield
    for model in made:
        model.close()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(tmp_path / "p.db").open()
    yield database
    database.close()


def ingestor(db: Database, model: Any, **kw: Any) -> Ingestor:
    synth = ModelSynthesizer(db, model, **kw) if model is not None else None
    return Ingestor(db, Promoter(db, novelty=Novelty(HashingEmbedder())), synthesizer=synth)


def model_memories(db: Database) -> list[tuple[str, int, int, str]]:
    return [(str(r[0]), int(r[1]), int(r[2]), str(r[3])) for r in db.reads.conn().execute(
        "SELECT content, candidate, needs_review, related_files FROM memories"
        " WHERE tags LIKE '%model_synthesis%' OR tags LIKE '%model_consolidation%' ORDER BY id")]


def reply(*mems: dict[str, Any]) -> str:
    return json.dumps({"memories": list(mems)})


# -- the schema and the grounding check ---------------------------------------------------
def test_reply_must_be_json_of_the_schema() -> None:
    assert parse_reply(reply(GOOD)) == [GOOD]
    assert parse_reply("```json\n" + reply(GOOD) + "\n```") == [GOOD]  # a fence is packaging
    with pytest.raises(SynthesisRejected) as bad:
        parse_reply("Sure! Here are the memories: {memories: []}")
    assert bad.value.code == "malformed"
    for off in ({"memories": [{**GOOD, "confidence": 0.9}]},           # an extra key
                {"memories": [{**GOOD, "type": "prefetch_pattern"}]},  # not a kind a model may state
                {"memories": [{**GOOD, "files": "cli.py"}]},           # wrong type
                {"memories": [GOOD] * 6},                              # more than a handful
                {"memories": [{**GOOD, "content": "short"}]},
                {"notes": []}):
        with pytest.raises(SynthesisRejected) as rej:
            parse_reply(json.dumps(off))
        assert rej.value.code == "off_schema"


def test_everything_a_memory_names_must_be_in_the_evidence() -> None:
    ev = SessionEvidence("s1", user_messages=["the config lives in settings/base.toml, port 8042"],
                         edits=["app/main.py"], files=["app/main.py"])
    ok = memory("Configuration comes from `settings/base.toml`; the server listens on port 8042.",
                files=["settings/base.toml"], values=["8042"])
    assert ungrounded(ok, [ev]) is None
    assert "file" in str(ungrounded(memory("Edit app/other.py first, always.", files=["app/other.py"]), [ev]))
    assert "value" in str(ungrounded({**ok, "values": ["9000"]}, [ev]))
    assert "command" in str(ungrounded(memory("Start it with the dev server command.",
                                              commands=["npm run dev"]), [ev]))
    # Named only in the text, not declared: still checked.
    assert "path" in str(ungrounded(memory("Remember that app/secret_helpers.py holds the keys."), [ev]))
    assert "quoted" in str(ungrounded(memory("Use `make deploy` to ship the app in production."), [ev]))


# -- one call per finished session, through each real protocol ----------------------------
def test_anthropic_model_that_invents_is_filtered(db: Database) -> None:
    asked: list[dict[str, Any]] = []

    def respond(body: dict[str, Any], n: int) -> Turn:
        asked.append(body)
        return Turn(text=reply(GOOD, INVENTED_FILE, INVENTED_COMMAND))

    with FakeAnthropic(respond, api_key=KEY, lifetime=60) as srv:
        model = ProviderJSONModel(AnthropicProvider(ANTHROPIC_MODEL, api_key=KEY, base_url=srv.url, timeout=10))
        ing = ingestor(db, model)
        results, _ = ing.learn_events(session())
    assert len(asked) == 1, "one synthesis call per finished session"
    prompt = asked[0]["messages"][0]["content"]
    prompt_text = prompt if isinstance(prompt, str) else " ".join(b.get("text", "") for b in prompt)
    assert "npm run test:unit" in prompt_text and "pytest --spec" in prompt_text
    assert "JSON" in str(asked[0]["system"]), "the schema travels in the system prompt"
    stored = model_memories(db)
    assert [m[0] for m in stored] == [GOOD["content"]]
    _, candidate, needs_review, _ = stored[0]
    assert candidate == 1 and needs_review == 1, "synthesised memories are candidates until confirmed"
    assert all("release.sh" not in m[0] and "make lint" not in m[0] for m in stored)
    assert results, "the rules' promotion still ran"


def test_openai_malformed_json_learns_nothing_and_loses_nothing(db: Database) -> None:
    with FakeOpenAI(lambda body, n: Turn(text='{"memories": [{"type": "gotcha", "content": '),
                    api_key=KEY, lifetime=60) as srv:
        model = ProviderJSONModel(OpenAICompatProvider(OPENAI_MODEL, base_url=srv.base_url, api_key=KEY,
                                                       timeout=10))
        synth = ModelSynthesizer(db, model)
        ing = Ingestor(db, Promoter(db, novelty=Novelty(HashingEmbedder())), synthesizer=synth)
        before = db.reads.conn().execute("SELECT count(*) FROM memories").fetchall()[0][0]
        ing.learn_events(session())
        digest_reports = synth.after_session(_digest(session("s2")))
    assert digest_reports[0].status == "malformed"
    assert model_memories(db) == []
    assert db.reads.conn().execute("SELECT count(*) FROM memories").fetchall()[0][0] >= before
    assert db.reads.conn().execute("SELECT count(*) FROM observer_session_evidence").fetchall()[0][0] == 2


def test_ollama_timeout_is_a_failed_pass_not_a_failed_import(db: Database) -> None:
    def slow(body: dict[str, Any], n: int) -> Any:
        time.sleep(3)
        return text_turn(reply(GOOD))

    srv = FakeOllama(slow).start()
    try:
        model = ProviderJSONModel(OllamaProvider(OLLAMA_MODEL, host=srv.host, timeout=0.5))
        synth = ModelSynthesizer(db, model)
        t0 = time.perf_counter()
        reports = synth.after_session(_digest(session()))
        assert time.perf_counter() - t0 < 2.5
    finally:
        srv.stop()
    assert reports[0].status == "failed" and reports[0].error
    assert model_memories(db) == []


def test_ollama_good_reply_is_stored(db: Database) -> None:
    srv = FakeOllama(lambda body, n: text_turn(reply(GOOD))).start()
    try:
        model = ProviderJSONModel(OllamaProvider(OLLAMA_MODEL, host=srv.host, timeout=10))
        ingestor(db, model).learn_events(session())
    finally:
        srv.stop()
    assert [m[0] for m in model_memories(db)] == [GOOD["content"]]


def test_consolidation_checks_against_every_session_it_read(db: Database) -> None:
    merged = memory("The CLI lives in `bookminder/cli.py` and its unit tests run with `npm run test:unit`.",
                    files=["bookminder/cli.py"], commands=["npm run test:unit"], kind="pattern")
    calls: list[str] = []

    def respond(body: dict[str, Any], n: int) -> Turn:
        text = body["messages"][0]["content"]
        calls.append("consolidate" if "proposed_earlier" in str(text) else "session")
        return Turn(text=reply(merged, INVENTED_FILE) if calls[-1] == "consolidate" else reply())

    with FakeAnthropic(respond, api_key=KEY, lifetime=60) as srv:
        model = ProviderJSONModel(AnthropicProvider(ANTHROPIC_MODEL, api_key=KEY, base_url=srv.url, timeout=10))
        ing = ingestor(db, model, consolidate_every=2)
        ing.learn_events(session("a", 1_700_000_000.0))
        assert calls == ["session"]
        ing.learn_events(session("b", 1_700_100_000.0))
    assert calls == ["session", "session", "consolidate"]
    stored = model_memories(db)
    assert [m[0] for m in stored] == [merged["content"]]
    assert json.loads(stored[0][3]) == ["bookminder/cli.py"]
    log = db.reads.conn().execute("SELECT trigger_count FROM observer_synthesis_log"
                                  " WHERE module = '*consolidation*'").fetchall()
    assert [r[0] for r in log] == [2]


def test_no_model_configured_means_no_synthesis(tmp_path: Path) -> None:
    app = Engram(Settings(data_dir=tmp_path / "data"))
    assert synthesis_model(app.settings) is None
    (tmp_path / "proj").mkdir()
    project = app.open_project(tmp_path / "proj", remember=False)
    try:
        ing = project.build_observer(embedder=HashingEmbedder())
        assert ing.synthesizer is not None and not ing.synthesizer.available()
        ing.learn_events(session())
        assert project.db.reads.conn().execute("SELECT count(*) FROM observer_session_evidence"
                                               ).fetchall()[0][0] == 0
    finally:
        project.close()


def test_configured_model_is_built_by_the_composition_root(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", llm_provider="ollama", llm_model=OLLAMA_MODEL)
    srv = FakeOllama(lambda body, n: text_turn(reply(GOOD))).start()
    settings.ollama_host = srv.host
    (tmp_path / "proj").mkdir()
    project = Engram(settings).open_project(tmp_path / "proj", remember=False)
    try:
        ing = project.build_observer(embedder=HashingEmbedder())
        assert isinstance(ing.synthesizer, ModelSynthesizer)
        ing.learn_events(session())
        rows = project.db.reads.conn().execute(
            "SELECT content, candidate FROM memories WHERE tags LIKE '%model_synthesis%'").fetchall()
        assert [(r[0], r[1]) for r in rows] == [(GOOD["content"], 1)]
        assert project.db.reads.conn().execute("SELECT count(*) FROM observer_session_evidence").fetchall() == [(1,)]
        from desktop.memory.lifecycle.control import delete_all

        delete_all(project, scrub=False)  # the user's words kept for synthesis go with the memories
        assert project.db.reads.conn().execute("SELECT count(*) FROM observer_session_evidence").fetchall() == [(0,)]
        project.preferences.set(auto_memory=False)
        asked = len(srv.requests)
        assert ing.synthesizer.after_session(_digest(session("s9")))[0].status == "off"
        assert len(srv.requests) == asked, "an opted-out project sends nothing to the model"
    finally:
        project.close()
        srv.stop()


def _digest(events: list[Any]) -> Any:
    from desktop.memory.observer.observer import Observer

    obs = Observer(events[0].session_id)
    for ev in events:
        obs.observe(ev)
    return obs.finalize()


def test_evidence_is_collected_capped_and_survives_a_checkpoint() -> None:
    from desktop.memory.observer.observer import Observer
    from desktop.memory.observer.scratchpad import Scratchpad

    events = (Seq("s1").user("<command-message>hi is running</command-message>").user("/cost")
              .user("Use uv, never pip, in this project.").bash("uv run pytest -q", output="3 passed")
              .bash("pip install -e .", output="error: externally-managed-environment", error=True)
              .edit("pyproject.toml").end())
    obs = Observer("s1")
    for ev in events[: len(events) // 2]:
        obs.observe(ev)
    restored = Observer("s1", scratchpad=Scratchpad.from_state(obs.checkpoint()))
    for ev in events[len(events) // 2:]:
        restored.observe(ev)
    ev = restored.finalize().evidence
    assert ev is not None
    assert ev.user_messages == ["Use uv, never pip, in this project."], "harness text and built-ins are not the user's"
    assert [(c.command, c.ok) for c in ev.commands] == [("uv run pytest -q", True), ("pip install -e .", False)]
    assert ev.edits == ["pyproject.toml"]
    assert SessionEvidence.from_dict(json.loads(ev.to_json())) == ev
    many = Seq("s2")
    for i in range(80):
        many.bash(f"echo {i}")
    obs2 = Observer("s2")
    for e in many.end():
        obs2.observe(e)
    digest = obs2.finalize()
    assert digest.evidence is not None
    kept = [c.command for c in digest.evidence.commands]
    assert len(kept) == 30 and kept[:5] == [f"echo {i}" for i in range(5)] and kept[-1] == "echo 79", \
        "the first commands (the task) and the latest (what finally worked) are kept"


def test_consolidation_fits_a_small_model_and_grounds_on_what_it_showed(db: Database) -> None:
    from desktop.memory.observer.model_synthesis import CONSOLIDATION_CHARS

    sent: list[str] = []
    only_in_output = memory("The build prints the secret banner ZX-OUTPUT-ONLY at the end of a run.",
                            values=["ZX-OUTPUT-ONLY"])

    def respond(body: dict[str, Any], n: int) -> Turn:
        sent.append(str(body["messages"][0]["content"]))
        return Turn(text=reply(only_in_output))

    with FakeAnthropic(respond, api_key=KEY, lifetime=60) as srv:
        model = ProviderJSONModel(AnthropicProvider(ANTHROPIC_MODEL, api_key=KEY, base_url=srv.url, timeout=10))
        synth = ModelSynthesizer(db, model, consolidate_every=1000)
        for i in range(8):
            seq = Seq(f"big{i}", t0=1_700_000_000.0 + 3600 * i)
            for j in range(12):
                seq.user(f"message {j} of session {i}: " + "word " * 100)
            seq.bash("make build", output="done ZX-OUTPUT-ONLY")
            synth.after_session(_digest(seq.end()))
        sent.clear()
        report = synth.consolidate()
    assert len(sent) == 1 and len(sent[0]) < CONSOLIDATION_CHARS + 2000
    assert "session 7" in sent[0] and "session 0:" not in sent[0], "newest sessions first, oldest left out"
    assert report.memory_ids == [] and "value" in report.dropped[0][1], "outputs were not shown: not evidence"


def test_a_live_session_finished_through_the_ingestor_is_synthesised(db: Database) -> None:
    srv = FakeOllama(lambda body, n: text_turn(reply(GOOD))).start()
    try:
        ing = ingestor(db, ProviderJSONModel(OllamaProvider(OLLAMA_MODEL, host=srv.host, timeout=10)))
        obs = ing.live("live-1")
        for ev in session("live-1"):
            obs.observe(ev)
        ing.finish(obs, "success")
    finally:
        srv.stop()
    assert len(srv.requests) == 1
    assert [m[0] for m in model_memories(db)] == [GOOD["content"]]


def test_secrets_in_the_evidence_reach_neither_the_model_nor_the_database(db: Database, tmp_path: Path) -> None:
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    sent: list[str] = []

    def respond(body: dict[str, Any], n: int) -> Turn:
        sent.append(json.dumps(body))
        return Turn(text=reply(memory(f"Export the key {secret} before running the deploy.", values=[secret])))

    events = (Seq("sec").user(f"the key is {secret}, keep it out of git")
              .bash(f"OPENAI_API_KEY={secret} npm run deploy", output="deployed").end())
    with FakeAnthropic(respond, api_key=KEY, lifetime=60) as srv:
        model = ProviderJSONModel(AnthropicProvider(ANTHROPIC_MODEL, api_key=KEY, base_url=srv.url, timeout=10))
        reports = ModelSynthesizer(db, model).after_session(_digest(events))
    assert sent and secret not in sent[0] and "[REDACTED:openai_key]" in sent[0]
    stored = db.reads.conn().execute("SELECT evidence FROM observer_session_evidence").fetchall()[0][0]
    assert secret not in stored
    assert reports[0].memory_ids == [], "a memory quoting a secret quotes nothing the evidence shows"


SYNAPSE = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "transcripts" / "claude-code" / \
    "synapse-070001ad.jsonl"


@pytest.mark.skipif(not SYNAPSE.is_file(), reason="real transcript not found at ../shared/data (development set)")
def test_a_real_transcript_sends_one_call_with_the_users_words_only(db: Database) -> None:
    bodies: list[dict[str, Any]] = []

    def respond(body: dict[str, Any], n: int) -> Turn:
        bodies.append(body)
        return Turn(text=reply(INVENTED_FILE))

    with FakeAnthropic(respond, api_key=KEY, lifetime=60) as srv:
        model = ProviderJSONModel(AnthropicProvider(ANTHROPIC_MODEL, api_key=KEY, base_url=srv.url, timeout=10))
        report = ingestor(db, model).ingest_file(SYNAPSE)
    assert report.status == "imported"
    assert report.sessions >= 1 and len(bodies) == report.sessions, (report.as_dict(), len(bodies))
    content = bodies[0]["messages"][0]["content"]
    text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    evidence = json.loads(text.split("\n", 1)[1])
    assert evidence["user_messages"] and evidence["commands"]
    for text in evidence["user_messages"]:
        assert not text.startswith(("<", "Caveat:", "This session is being continued")), text
    assert model_memories(db) == [], "the invented deploy script is not in this session"


def test_cli_consolidate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from desktop.cli.main import main as cli_main

    project_dir = tmp_path / "proj"
    project_dir.mkdir()
    data = tmp_path / "data"
    args = ["--data-dir", str(data), "--project", str(project_dir), "--json"]
    assert cli_main(["consolidate", *args]) != 0, "no model configured: a clear refusal"
    assert "no model is configured" in capsys.readouterr().err
    srv = FakeOllama(lambda body, n: text_turn(reply(INVENTED_FILE))).start()
    try:
        data.mkdir(exist_ok=True)
        (data / "settings.json").write_text(json.dumps({"llm_provider": "ollama", "llm_model": OLLAMA_MODEL,
                                                        "ollama_host": srv.host}), encoding="utf-8")
        assert cli_main(["consolidate", *args]) == 0
        assert json.loads(capsys.readouterr().out)["status"] == "empty"
        sample = Path(__file__).parent / "samples" / "codex_exec.jsonl"
        assert cli_main(["ingest", *args, str(sample)]) == 0
        capsys.readouterr()
        assert cli_main(["consolidate", *args]) == 0
        out = json.loads(capsys.readouterr().out)
    finally:
        srv.stop()
    assert out["status"] == "none" and out["memory_ids"] == []
    assert out["dropped"][0]["reason"] == "file not in evidence: deploy/release.sh"


def test_a_session_imported_while_it_runs_costs_one_call_once_settled(db: Database) -> None:
    now = [1_800_000_000.0]
    srv = FakeOllama(lambda body, n: text_turn(reply(GOOD))).start()
    try:
        model = ProviderJSONModel(OllamaProvider(OLLAMA_MODEL, host=srv.host, timeout=10))
        synth = ModelSynthesizer(db, model, settle_seconds=600, clock=lambda: now[0])
        first = Seq("run", t0=now[0] - 100).user("Always run `npm run test:unit`, not npm test.").end()
        later = Seq("run", t0=now[0] - 10).user("And never commit the generated dist folder.").end()
        assert synth.after_session(_digest(first))[0].status == "pending"
        assert synth.after_session(_digest(later))[0].status == "pending"
        assert srv.requests == [], "a session still growing is not synthesised"
        now[0] += 601
        reports = synth.sweep()
        assert synth.sweep() == [], "once only"
    finally:
        srv.stop()
    assert [r.status for r in reports] == ["written"]  # the user named both commands
    assert len(srv.requests) == 1
    sent = srv.requests[0]["messages"][-1]["content"]
    assert "npm run test:unit" in sent and "generated dist folder" in sent, "both parts in the one call"
