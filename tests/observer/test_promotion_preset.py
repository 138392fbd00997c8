"""The trust settings' promotion preset reaches every door's observer through the composition root.

The same transcript is learned from by `engram ingest` (the CLI door) and by the hooks' session
end (the door `engram serve` and the hook processes use); the project's preset, stored as the
Trust dialog stores it, decides what is promoted. A long-lived project (a running service)
sees a change at the next session, without reopening.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from obs_helpers import Seq, digest_of

from desktop.agents.hooks.handlers import Handlers
from desktop.agents.hooks.protocol import from_dict
from desktop.cli.main import main as cli_main
from desktop.composition import Engram
from desktop.memory.observer.candidates import build_candidates
from desktop.memory.observer.novelty import HashingEmbedder
from desktop.memory.preferences import PRESET_NAMES, ProjectPrefs
from desktop.memory.store.errors import ValidationError
from desktop.memory.store.writer import FnOp
from desktop.memory.trust_levels import PROMOTION_PRESETS, promotion_preset
from desktop.settings import Settings

SAMPLE = Path(__file__).parent / "samples" / "claude_stream.jsonl"
SAMPLE_SID = "5f0c1e9a-2b7d-4c3e-9a81-0d6e4f2b7c19"
RECIPE = "Run the tests with `python -m pytest -q` from the project root."


def _transcript(tmp_path: Path, n: int) -> Path:
    """The sample Claude Code transcript as session number ``n`` (its own id, so not a duplicate)."""
    out = tmp_path / f"session-{n}.jsonl"
    # Another session: its own id and its own tool call ids (a copy with the same ids would be the
    # same session resumed, one piece of evidence); the whole suite run, not one file (a selection).
    text = SAMPLE.read_text(encoding="utf-8").replace(SAMPLE_SID, f"{SAMPLE_SID[:-2]}{n:02d}")
    out.write_text(text.replace("toolu_", f"toolu_{n:02d}").replace(" tests/test_invoice.py -q", " -q"),
                   encoding="utf-8")
    return out


def _choose(project: Any, preset: str) -> None:
    """Store the preset the way the app's Trust dialog does (the whole preferences, one audited write)."""
    prefs = project.preferences.load()
    prefs.promotion_preset = preset
    project.preferences.save(prefs).result(10)


def _contents(project: Any) -> list[str]:
    return [r[0] for r in project.db.reads.conn().execute("SELECT content FROM memories WHERE type <> 'code'")]


@pytest.fixture
def engram(tmp_path: Path) -> Engram:
    return Engram(Settings(data_dir=tmp_path / "data"))


@pytest.fixture
def project(engram: Engram, tmp_path: Path) -> Iterator[Any]:
    folder = tmp_path / "proj"
    folder.mkdir(exist_ok=True)
    proj = engram.open_project(folder, remember=False)
    proj.build_observer(embedder=HashingEmbedder())  # no model download in tests; same promoter otherwise
    yield proj
    proj.close()


def test_the_app_stores_a_preset_the_core_reads(project: Any) -> None:
    assert project.preferences.promotion_preset().name == "balanced"  # never chosen
    _choose(project, "conservative")
    assert project.preferences.promotion_preset() == PROMOTION_PRESETS["conservative"]
    project.preferences.set(promotion_preset="eager", actor="cli")  # the CLI's setter: the app reads it back
    assert project.preferences.load().promotion_preset == "eager"
    assert project.preferences.promotion_preset().name == "eager"
    with pytest.raises(ValidationError):
        project.preferences.set(promotion_preset="reckless")


@pytest.mark.parametrize(("preset", "learned"), [("balanced", False), ("eager", True)])
def test_cli_ingest_promotes_by_the_projects_preset(tmp_path: Path, engram: Engram, preset: str, learned: bool,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    proj = engram.open_project(folder, remember=False)
    _choose(proj, preset)
    proj.close()
    args = ["--project", str(folder), "--data-dir", str(tmp_path / "data"), "--json"]
    assert cli_main(["ingest", *args, str(_transcript(tmp_path, 1))]) == 0
    report = json.loads(capsys.readouterr().out)[0]
    assert report["status"] == "imported"
    proj = engram.open_project(folder, remember=False, maintain=False)
    try:
        # One run of `pytest` is a recipe after one session only when the preset is eager.
        assert (RECIPE in _contents(proj)) is learned
        assert report["added"] == (1 if learned else 0)
    finally:
        proj.close()


def test_hook_session_end_follows_a_preset_changed_while_the_service_runs(project: Any, tmp_path: Path) -> None:
    handlers = Handlers(project)  # what `engram serve` keeps warm for every hook of the project

    def end_session(n: int) -> None:
        path = _transcript(tmp_path, n)
        handlers.handle(from_dict("claude-code", "session-end", {
            "session_id": f"{SAMPLE_SID[:-2]}{n:02d}", "cwd": str(project.info.root),
            "transcript_path": str(path), "reason": "exit"}))
        project.db.writer.run(FnOp("flush", lambda tx: None))

    end_session(1)
    assert RECIPE not in _contents(project)  # balanced: one run is not yet a recipe, two are
    _choose(project, "conservative")  # the user changes the Trust dialog; the service is not restarted
    end_session(2)
    assert RECIPE not in _contents(project)  # conservative: two sessions are not enough
    end_session(3)
    assert RECIPE in _contents(project)  # three are


def test_presets_order_what_a_session_can_promote() -> None:
    """Conservative asks for one session more, eager one fewer; what the user said is exempt."""
    rule = "Never run `alembic upgrade` against prod; use `make migrate` instead."
    digest = digest_of(Seq("p1").read("cache.py").user(rule).bash("pytest -q", "1 passed").end("success"))
    recipe = next(s.key for s in digest.signals if s.kind == "recipe")  # needs 2 sessions when balanced

    def kept(name: str, seen_before: int) -> set[str]:
        cands = build_candidates(digest, {recipe: seen_before}, failed=False, preset=promotion_preset(name))
        return {c.signal.kind for c in cands if c.drop_reason is None}

    assert kept("conservative", 0) == kept("balanced", 0) == {"user_rule"}  # the user's word: every preset
    assert kept("eager", 0) == {"user_rule", "recipe"}
    assert kept("balanced", 1) == {"user_rule", "recipe"} and kept("conservative", 1) == {"user_rule"}
    assert kept("conservative", 2) == {"user_rule", "recipe"}
    assert promotion_preset("unknown") == promotion_preset(None) == PROMOTION_PRESETS["balanced"]
    assert PROMOTION_PRESETS["conservative"].cap(20) == 10 and PROMOTION_PRESETS["eager"].cap(0) == 0


def test_prefs_offer_the_core_presets() -> None:
    assert tuple(PRESET_NAMES) == tuple(PROMOTION_PRESETS) and ProjectPrefs().promotion_preset in PRESET_NAMES
