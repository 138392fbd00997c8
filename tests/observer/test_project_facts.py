"""Issue 26: project facts from command outcomes and from what the user states; a secret's value never kept."""

from __future__ import annotations

from obs_helpers import Seq, digest_of, kinds

from desktop.memory.observer.novelty import HashingEmbedder, Novelty
from desktop.memory.observer.promotion import Promoter
from desktop.memory.store.database import Database


def _facts(seq: Seq) -> dict[str, str]:
    return {s.data.get("fact", "user"): s.data["text"] for s in kinds(digest_of(seq.end())).get("project_fact", [])}


def test_what_an_agent_reads_again_in_one_command_is_no_fact() -> None:
    """The remote `git remote` prints and the shell a missing command shows: one command away, judged
    weak or noise on every dev project; what the user states about them is kept (below)."""
    s = Seq().bash("git remote -v", "origin\tgit@github.com:acme/payments-api.git (fetch)\n"
                                    "origin\tgit@github.com:acme/payments-api.git (push)")
    s.bash("uv --version", "(eval):1: command not found: uv", True)
    assert _facts(s) == {}


def test_a_required_variable_is_kept_without_its_value() -> None:
    s = Seq().bash("STRIPE_KEY=sk_live_51Habcdefghijklmnopqrstu npm run dev",
                   "Error: STRIPE_SECRET_KEY is not set (got sk_live_51Habcdefghijklmnopqrstu)", True)
    facts = _facts(s)
    assert facts == {"env": "The environment variable `STRIPE_SECRET_KEY` must be set for `npm run` to work "
                            "(ask the user for its value; it is not stored)."}
    assert "sk_live" not in str(facts)


def test_no_docker_here() -> None:
    s = Seq().bash("docker compose up -d", "zsh: command not found: docker", True)
    assert "Docker is not available here" in _facts(s)["docker"]


def test_what_a_manifest_pins_is_no_fact_it_is_one_read_away() -> None:
    s = Seq().read("go.mod", "     1\tmodule github.com/acme/api\n     2\t\n     3\tgo 1.25.6\n")
    s.read("pyproject.toml", '[project]\nname = "x"\nrequires-python = ">=3.11"\n')
    s.read(".tool-versions", "nodejs 20.11.1\n")
    assert "project_fact" not in kinds(digest_of(s.end()))


def test_what_the_user_states_about_the_environment_is_kept_at_once(db: Database) -> None:
    p = Promoter(db, novelty=Novelty(HashingEmbedder()))
    p.promote(digest_of(Seq().user("we're using `uv` for the virtualenv, not pip.").end()))
    rows = db.reads.conn().execute("SELECT content, candidate, type FROM memories").fetchall()
    assert rows == [('The user stated: "we\'re using `uv` for the virtualenv, not pip."', 0, "note")]


def test_a_command_fact_needs_a_second_session(db: Database) -> None:
    p = Promoter(db, novelty=Novelty(HashingEmbedder()))
    missing = "zsh: command not found: docker"
    p.promote(digest_of(Seq("a", t0=1e9).bash("docker compose up -d", missing, True).end()))
    assert db.reads.conn().execute("SELECT count(*) FROM memories").fetchall() == [(0,)]
    p.promote(digest_of(Seq("b", t0=1e9 + 100).bash("docker compose up -d", missing, True).end()))
    rows = db.reads.conn().execute("SELECT content FROM memories").fetchall()
    assert len(rows) == 1 and rows[0][0].startswith("Docker is not available here")


def test_the_issues_own_example_of_a_stated_environment() -> None:
    facts = _facts(Seq().user("there is no Docker here, the services run on db.internal:5432"))
    assert facts == {"user": "there is no Docker here, the services run on db.internal:5432"}
