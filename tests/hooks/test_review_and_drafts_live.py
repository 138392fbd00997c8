"""Issue 26, from the hooks' door: sessions reported live by Claude Code's hooks learn the review recipe,
and a hook the session wrote teaches nothing there, as the same sessions ingested by the CLI do."""

from __future__ import annotations

from typing import Any

from desktop.agents.hooks.handlers import Handlers
from tests.hooks.test_moments import bash, flush, hook

REFUSAL = ("Bash operation blocked by hook:\n- [python3 .claude/check_git.py]: Blocked: 'git add .' detected. "
           "Please stage files explicitly by name")


def _live(project: Any, signal: str) -> list[str]:
    return [r[0] for r in project.db.reads.conn().execute(
        "SELECT content FROM memories WHERE deprecated = 0 AND json_extract(metadata, '$.signal') = ?", (signal,))]


def test_a_pr_habit_reported_by_the_hooks_in_two_sessions_is_a_recipe(project: Any) -> None:
    h = Handlers(project)
    for sid in ("s1", "s2"):
        hook(h, "session-start", sid, source="startup")
        bash(h, sid, f"gh pr create --draft --title 'feat {sid}' --body 'why'", "u1", output="https://x/pull/7")
        hook(h, "session-end", sid, transcript_path="")
        flush(project)
    assert _live(project, "recipe") == ["Open pull requests with `gh pr create --draft --title … --body …`."]


def test_a_hook_the_session_wrote_teaches_nothing_through_the_hooks_either(project: Any) -> None:
    h = Handlers(project)
    hook(h, "session-start", "d1", source="startup")
    hook(h, "before-tool", "d1", tool_name="Write", tool_use_id="w1",
         tool_input={"file_path": str(h.root / ".claude" / "check_git.py"), "content": "import sys"})
    hook(h, "after-tool", "d1", tool_name="Write", tool_use_id="w1",
         tool_input={"file_path": str(h.root / ".claude" / "check_git.py"), "content": "import sys"},
         tool_response={"success": True})
    bash(h, "d1", "git add .", "u2", fails=True, output=REFUSAL)
    hook(h, "session-end", "d1", transcript_path="")
    flush(project)
    assert _live(project, "hook_block") == []
    hook(h, "session-start", "d2", source="startup")
    bash(h, "d2", "git add .", "u3", fails=True, output=REFUSAL)  # a session that left the hook alone
    hook(h, "session-end", "d2", transcript_path="")
    flush(project)
    assert len(_live(project, "hook_block")) == 1
