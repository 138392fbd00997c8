"""Issue 26, from the hooks' door: the user's rules typed into a Claude Code session are learned when its
SessionEnd hook hands over the transcript, as ``engram ingest`` learns them (tests/observer/
test_utterances.py): past a discourse marker, and a weaker rule the user had to say again in the session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.agents.hooks.handlers import Handlers
from tests.hooks.test_moments import flush, hook
from tests.observer.cc_records import Transcript


def _rules(project: Any) -> list[str]:
    return [str(r[0]) for r in project.db.reads.conn().execute(
        "SELECT content FROM memories WHERE deprecated = 0 AND candidate = 0 "
        "AND json_extract(metadata, '$.signal') = 'user_rule'")]


def _session(h: Handlers, folder: Path, sid: str, *prompts: str) -> None:
    hook(h, "session-start", sid, source="startup")
    transcript = Transcript(sid, str(h.root))
    for prompt in prompts:
        hook(h, "prompt", sid, prompt=prompt)
        transcript.user(prompt).say("On it.")
    hook(h, "session-end", sid, transcript_path=str(transcript.write(folder)))
    flush(h.project)


def test_a_rule_behind_a_discourse_marker_is_learned_live(project: Any, tmp_path: Path) -> None:
    h = Handlers(project)
    _session(h, tmp_path, "m1", "oh, please don't amend commits - it breaks the release hooks")
    assert _rules(project) == ['The user\'s instruction: "oh, please don\'t amend commits - it breaks the release '
                               'hooks"']


def test_a_weaker_rule_stands_live_once_the_user_insists(project: Any, tmp_path: Path) -> None:
    h = Handlers(project)
    rule = "in this repo we want to commit `.entire/settings.json`"
    _session(h, tmp_path, "w1", rule)
    assert _rules(project) == []  # a weaker rule waits for another session ...
    other = rule.replace("settings.json", "hooks.json")
    _session(h, tmp_path, "w2", other, "I told you: hooks.json is committed!")
    assert _rules(project) == [f'The user\'s instruction (about `.entire/hooks.json`): "{other}"']  # ... or insistence


def test_a_rules_object_from_the_commands_that_followed_is_learned_live(project: Any, tmp_path: Path) -> None:
    """A rule that names no code token gets the versioned value the session then ran (observer/referents.py)."""
    h = Handlers(project)
    rule = "reviews must always use the latest model, 3.1"
    hook(h, "session-start", "v1", source="startup")
    hook(h, "prompt", "v1", prompt=rule)
    transcript = Transcript("v1", str(h.root)).user(rule)
    transcript.bash("gemini -m gemini-3.1-pro-preview -p 'say hello'", "hello")
    transcript.bash("gemini -m gemini-3.1-pro-preview -p 'review the plan'", "1. the cache is never cleared")
    hook(h, "session-end", "v1", transcript_path=str(transcript.write(tmp_path)))
    flush(h.project)
    assert _rules(project) == [f'The user\'s instruction: "{rule}" The session that heard it then ran '
                               '`gemini -m gemini-3.1-pro-preview`.']
