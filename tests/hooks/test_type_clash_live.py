"""Issue 26, from the hooks' door: two sessions whose builds mix up a type of the project's own with its
plain type, reported live by Claude Code's hooks, learn the type and the file that declares it, as the
same sessions ingested by the CLI do (tests/observer/test_type_clashes.py)."""

from __future__ import annotations

from typing import Any

from desktop.agents.hooks.handlers import Handlers
from tests.hooks.test_moments import bash, flush, hook

CLASH = ("cmd/app/run.go:12:9: cannot use name (variable of type string) as ids.UserID value in argument "
         "to load\n")


def _live(project: Any) -> list[tuple[str, str]]:
    return [(str(r[0]), str(r[1])) for r in project.db.reads.conn().execute(
        "SELECT content, candidate FROM memories WHERE deprecated = 0 "
        "AND json_extract(metadata, '$.signal') = 'type_clash'")]


def test_a_type_mixed_up_in_two_live_sessions_is_learned_with_its_declaration(project: Any) -> None:
    h = Handlers(project)
    (h.root / "internal" / "ids").mkdir(parents=True)
    (h.root / "internal" / "ids" / "ids.go").write_text("package ids\n\ntype UserID string\n", encoding="utf-8")
    for n, sid in enumerate(("t1", "t2")):
        hook(h, "session-start", sid, source="startup")
        bash(h, sid, "go build ./...", f"u{n}", fails=True, output=CLASH)
        hook(h, "session-end", sid, transcript_path="")
        flush(project)
        if sid == "t1":
            assert _live(project) == []  # one session's mix-up is that day's
    [(content, candidate)] = _live(project)
    assert content.startswith("`ids.UserID` (declared in `internal/ids/ids.go`) is a type of its own here, "
                              "not plain `string`: ") and candidate == "0"
