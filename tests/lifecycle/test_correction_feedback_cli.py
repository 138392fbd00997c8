"""The atomic correction op and the CLI doors of feedback (correct, flag, confirm, feedback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.cli.main import main
from desktop.memory.lifecycle.correction import ApplyCorrection
from desktop.memory.store.errors import ValidationError


def test_incorrect_is_one_transaction_flag_deprecate_replace_link(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    mid = svc.add("The API runs on port 9000", type="decision", related_files=["api/app.py"],
                  confidence=0.6).result().id
    new_id = cdb.writer.run(ApplyCorrection(mid, "incorrect", "The API runs on port 8080"))
    old, new = svc.get(mid), svc.get(new_id)
    assert old.deprecated and {"type": "superseded_by", "id": new_id} in old.relations
    assert new.content == "The API runs on port 8080" and new.related_files == ["api/app.py"]
    assert new.user_verified and {"type": "supersedes", "id": mid} in new.relations
    actions = [h["action"] for h in svc.history(mid)]
    assert actions[-4:] == ["use", "feedback", "deprecate", "edit"]
    assert svc.history(mid)[-4]["detail"]["outcome"] == "flagged"


def test_failing_correction_changes_nothing(cdb, svc) -> None:  # type: ignore[no-untyped-def]
    clash = svc.add("Use ruff for linting").result().id
    mid = svc.add("Use flake8 for linting").result().id
    # The replacement would duplicate a live memory; flag and deprecate must roll back with it.
    with pytest.raises(ValidationError):
        cdb.writer.run(ApplyCorrection(mid, "partially_wrong", "Use ruff for linting"))
    assert not svc.get(mid).deprecated and svc.get(mid).content == "Use flake8 for linting"
    assert [h["action"] for h in svc.history(mid)] == ["add"] and not svc.get(clash).deprecated
    with pytest.raises(ValidationError):
        ApplyCorrection(mid, "incorrect", "")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> dict:  # type: ignore[type-arg]
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_flag_confirm_feedback_correct(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "p").mkdir()
    env = ["--project", str(tmp_path / "p"), "--data-dir", str(tmp_path / "d")]
    a = _run(capsys, "add", *env, "Deploy with make release")["id"]
    b = _run(capsys, "add", *env, "The cache warms at boot")["id"]
    answer = tmp_path / "answer.txt"
    answer.write_text(f"Ran it as [Memory #{a}: deploy with make release] says.", encoding="utf-8")
    out = _run(capsys, "feedback", *env, "--shown", str(a), str(b), "--answer-file", str(answer), "--session", "s1")
    assert out["outcomes"] == {str(a): "cited", str(b): "ignored"}
    assert _run(capsys, "flag", *env, str(b), "--reason", "it warms lazily")["needs_review"] is True
    assert _run(capsys, "confirm", *env, str(a))["candidate"] is False
    fixed = _run(capsys, "correct", *env, str(b), "--kind", "incorrect", "--text", "The cache warms lazily")
    assert fixed["current"] != b
    history = _run(capsys, "get", *env, str(b))["history"]
    assert [h["action"] for h in history][:4] == ["add", "use", "use", "feedback"]  # ignored, then flagged
