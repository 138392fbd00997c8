"""What a session start says (issue 25, item 4) and how a memory naming files is said once they
are gone (item 5): the user's own rules whatever their learned confidence, no recipes an agent
found unaided, and no stale example in a lesson."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.agents.hooks.handlers import Handlers
from desktop.agents.hooks.protocol import from_dict
from desktop.composition import Engram
from desktop.memory.lifecycle.freshness import as_of_now
from desktop.memory.store.memory_ops import NewMemory
from desktop.memory.store.writer import FnOp
from desktop.settings import Settings


@pytest.fixture
def project(payments_dir: Path, data_dir: Path) -> Iterator[Any]:
    proj = Engram(Settings(data_dir=data_dir)).open_project(payments_dir, remember=False)
    yield proj
    proj.close()


def add(project: Any, content: str, mtype: str, source: str, confidence: float, **metadata: Any) -> int:
    return int(project.memories.add(NewMemory(content=content, type=mtype, source=source, confidence=confidence,
                                              metadata=metadata)).result(10).id)


def start(project: Any, sid: str = "s1") -> str:
    project.db.writer.run(FnOp("flush", lambda tx: None))
    h = Handlers(project)
    return h.handle(from_dict("claude-code", "session-start", {"session_id": sid, "cwd": str(h.root),
                                                               "source": "startup"}))


def test_session_start_says_the_users_rules_and_not_the_recipes_agents_found(project: Any) -> None:
    said_twice = int(project.memories.add(NewMemory(
        content='The user\'s instruction: "use the typed ids instead of plain strings"', type="preference",
        source="observer_inferred", confidence=0.688, provenance_session_ids=["a", "b"],
        metadata={"signal": "user_rule", "sessions": 2})).result(10).id)
    said_once = add(project, 'The user\'s instruction: "show the commit message for the session"', "preference",
                    "observer_inferred", 0.688, signal="user_rule", sessions=1)
    inferred = add(project, "Prefer small functions in core/.", "preference", "observer_inferred", 0.7,
                   signal="sequence")
    found = add(project, "Build with `go build ./...` from the project root.", "workflow_recipe",
                "observer_inferred", 0.95, signal="recipe")
    taught = add(project, "Release with `make release` from the project root.", "workflow_recipe", "user_taught",
                 0.9)
    text = start(project)
    assert f'id="{said_twice}"' in text and "typed ids" in text  # the user typed it again: the evidence
    assert f'id="{said_once}"' not in text  # read once, it may be a fragment of a one-off request
    assert f'id="{inferred}"' not in text                       # an inference still needs the floor
    assert f'id="{found}"' not in text and "go build" not in text
    assert f'id="{taught}"' in text


def test_a_lessons_gone_example_is_left_out_and_a_gone_file_is_named(project: Any) -> None:
    root = Path(project.info.root)
    (root / "cmd").mkdir()
    (root / "cmd" / "start.go").write_text("package cmd\n", encoding="utf-8")
    wrong = add(project, "`cmd/commands` is the wrong place to look: a session that looked there found nothing; "
                "what it looked for was in `cmd/start.go`.", "gotcha", "observer_inferred", 0.9, signal="wrong_place")
    beside = add(project, "`cmd/commands` is the wrong place to look: a session that looked there found nothing; "
                 "what it looked for was in `cmd/` (`cmd/start.go`).", "gotcha", "observer_inferred", 0.9,
                 signal="wrong_place")
    missing = add(project, "`cmd/old.go` does not exist: a session that looked there found nothing; what it looked "
                  "for was in `cmd/start.go`.", "gotcha", "observer_inferred", 0.9, signal="wrong_place")
    fix = add(project, "`go test ./cmd` failed; editing `cmd/start.go` made it pass.", "error_pattern",
              "observer_inferred", 0.9, signal="error_fix")
    mems = project.memories.get_many([wrong, beside, missing, fix])
    now = {m.id: m.content for m in as_of_now(mems.values(), root)}
    assert now[wrong].endswith("what it looked for was in `cmd/start.go`.")  # all there: as learned
    assert now[missing] == mems[missing].content  # the place it names is meant to be missing
    (root / "cmd" / "start.go").unlink()
    now = {m.id: m.content for m in as_of_now(mems.values(), root)}
    assert now[wrong] == "`cmd/commands` is the wrong place to look: a session that looked there found nothing."
    assert now[beside].endswith("found nothing; what it looked for was in `cmd/`.")  # the folder holds; its file went
    assert now[missing] == "`cmd/old.go` does not exist: a session that looked there found nothing."
    assert now[fix].startswith("(Possibly stale: `cmd/start.go` no longer exists.)")
