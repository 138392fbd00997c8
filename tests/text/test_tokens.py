"""Tests for desktop.memory.text.tokens: identifier splitting, safe FTS5 queries, token counts."""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

import apsw
import pytest

from desktop.memory.text import count_tokens, expand_code_terms, fts_match_query, split_identifier

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("word", "parts"),
    [
        ("verifyJwt", ["verify", "jwt"]),
        ("verify_jwt", ["verify", "jwt"]),
        ("auth/tokens.ts", ["auth", "tokens", "ts"]),
        ("HTTPServerError", ["http", "server", "error"]),
        ("getURL2", ["get", "url2"]),
        ("sha256sum", ["sha256", "sum"]),
        ("__init__", ["init"]),
        ("std::vector", ["std", "vector"]),
        ("kebab-case-name", ["kebab", "case", "name"]),
        ("plain", ["plain"]),
        ("straße", ["straße"]),
    ],
)
def test_split_identifier(word: str, parts: list[str]) -> None:
    assert split_identifier(word) == parts


def test_expand_code_terms_keeps_original_and_adds_parts() -> None:
    text = "Call verifyJwt in auth/tokens.ts; it raises HTTPServerError via getURL2 and verify_jwt."
    out = expand_code_terms(text)
    assert out.startswith(text)
    extra = out[len(text) :].split()
    for term in ("verify", "jwt", "auth", "tokens", "ts", "http", "server", "error", "get", "url2"):
        assert term in extra
    assert len(extra) == len(set(extra))  # each extra term once
    assert expand_code_terms("plain words only") == "plain words only"
    assert expand_code_terms("") == ""


def test_expand_code_terms_fast_path_finds_the_same_compounds_as_the_regex() -> None:
    """ASCII text takes str.translate+split (issue 17); it must add exactly the regex's compounds' parts."""
    import random

    from desktop.memory.text.tokens import _COMPOUND, split_identifier

    def reference(text: str) -> str:
        extra: list[str] = []
        for compound in dict.fromkeys(_COMPOUND.findall(text)):
            parts = split_identifier(compound)
            for part in parts if len(parts) >= 2 else ():
                if part not in extra:
                    extra.append(part)
        return f"{text} {' '.join(extra)}" if extra else text

    rng = random.Random(17)
    alphabet = "".join(chr(c) for c in range(32, 127)) + "\t\n\r\x0b\x0c\x1c\x1f\x85\xa0éßİ_"
    samples = [reference.__doc__ or "", "def get_URL2(self, x_y): return self.httpServer/a.b::c-d $e @f #g"]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(3000)]
    for text in samples:
        assert expand_code_terms(text) == reference(text), repr(text)


def _fts() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute("create virtual table t using fts5(body, tokenize='porter unicode61 remove_diacritics 2')")
    for body in (
        "Call verifyJwt before the handler runs",
        "The HTTPServerError is raised by getURL2 in auth/tokens.ts",
        "unrelated note about the build cache",
    ):
        conn.execute("insert into t(body) values (?)", (expand_code_terms(body),))
    return conn


def _match(conn: apsw.Connection, expr: str) -> list[str]:
    return [r[0] for r in conn.execute("select body from t where t match ? order by bm25(t)", (expr,))]


HOSTILE = [
    '"unbalanced',
    "a AND OR",
    "foo:bar",
    "*",
    "NEAR(",
    "NEAR(a b, 3)",
    "-x",
    "-",
    "🙂🔥",
    "",
    "   ",
    "body:secret",
    "(a OR",
    "NOT",
    "x^y",
    "col : {a b}",
    "'single' \"double\" `tick`",
    "a+b=c",
    "\\\\server\\share",
    "\x00null\x00byte",
    "%_%",
    "AND AND AND verifyJwt",
    "日本語のテキスト",
    "\ud83d lone surrogate",
]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("mode", ["or", "and"])
def test_hostile_queries_never_raise(query: str, mode: str) -> None:
    conn = _fts()
    expr = fts_match_query(query, mode)
    if expr is not None:
        _match(conn, expr.encode("utf-8", "replace").decode("utf-8"))


def test_query_finds_identifiers_by_parts() -> None:
    conn = _fts()
    assert _match(conn, fts_match_query("verify") or "")[0].startswith("Call verifyJwt")
    assert _match(conn, fts_match_query("verify_jwt", "and") or "")[0].startswith("Call verifyJwt")
    assert _match(conn, fts_match_query("verifyJwt", "and") or "")[0].startswith("Call verifyJwt")
    assert _match(conn, fts_match_query("server error", "and") or "")[0].startswith("The HTTPServerError")
    assert _match(conn, fts_match_query("tokens.ts", "and") or "")[0].startswith("The HTTPServerError")
    assert _match(conn, fts_match_query("the cache", "and") or "") == ["unrelated note about the build cache"]


def test_query_shape() -> None:
    assert fts_match_query("How do I verify the JWT?") == '"verify" OR "jwt"'
    assert fts_match_query("verifyJwt verify", "and") == '"verify" AND "jwt"'
    assert fts_match_query("verifyJwt") == '"verifyjwt" OR "verify" OR "jwt"'
    assert fts_match_query("the of and") is None
    assert fts_match_query("") is None
    assert fts_match_query("NEAR AND OR") == '"near"'  # "and"/"or" are stopwords; NEAR is data
    with pytest.raises(ValueError):
        fts_match_query("x", "xor")
    many = " ".join(f"word{i}" for i in range(500))
    assert (fts_match_query(many) or "").count(" OR ") < 64


# ---------------------------------------------------------------------------
# count_tokens
# ---------------------------------------------------------------------------

_TOKENIZER_JSON = REPO / "resources" / "models" / "all-minilm-l6-v2" / "tokenizer.json"

PROSE = """\
Engram gives coding agents a long-term memory of the codebase they work on. When an
agent fixes a flaky test, discovers that the staging database needs a VPN, or learns
that the team prefers small pull requests, that knowledge is usually lost the moment
the session ends. Engram watches the session, keeps the few observations that are
worth remembering, and brings them back when they are relevant again. Memories decay
when nobody uses them, can be pinned when they matter, and are never sent anywhere:
everything lives in one SQLite file on the developer's own machine. Retrieval mixes
keyword search, dense embeddings and the structure of the code graph, then packs the
best results into a strict token budget so the agent's context window is not wasted.
"""


def _corpus() -> dict[str, str]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    records = [
        {"id": i, "name": f"user{i}", "email": f"user{i}@example.com", "active": i % 2 == 0, "tags": ["a", "b"]}
        for i in range(120)
    ]
    return {
        "prose": PROSE * 3 + (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8"),
        "python": (stdlib / "argparse.py").read_text(encoding="utf-8")[:20_000]
        + (stdlib / "json" / "encoder.py").read_text(encoding="utf-8")[:10_000],
        "json": json.dumps(records, indent=2)[:12_000],
    }


@pytest.mark.skipif(not _TOKENIZER_JSON.exists(), reason="bundled MiniLM tokenizer.json not present")
def test_count_tokens_within_ten_percent_of_reference_tokenizer() -> None:
    import tokenizers  # a runtime dependency: missing is an error, not a skip

    ref = tokenizers.Tokenizer.from_file(str(_TOKENIZER_JSON))
    ref.no_truncation()
    est_total = ref_total = 0
    for kind, text in _corpus().items():
        est = count_tokens(text)
        real = len(ref.encode(text, add_special_tokens=False).ids)
        # Per kind the two tokenizers genuinely differ (WordPiece ignores whitespace
        # and splits every punctuation mark), so only a loose bound here...
        assert abs(est / real - 1) <= 0.25, (kind, est, real)
        est_total += est
        ref_total += real
    # ...and the contract on the mixed corpus.
    assert abs(est_total / ref_total - 1) <= 0.10, (est_total, ref_total)


def test_count_tokens_basics() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello") == 1
    assert count_tokens("Hello world") == 2
    assert 8 <= count_tokens("The quick brown fox jumps over the lazy dog.") <= 12
    assert count_tokens("1234567") == 3  # digits go in groups of three, as in cl100k
    # About four characters per token on English prose (the cl100k rule of thumb).
    assert 3.3 <= len(PROSE) / count_tokens(PROSE) <= 4.8
    assert count_tokens("日本語のテキスト") >= 5
    assert count_tokens("\ud800 broken \udfff") >= 1


def test_count_tokens_is_fast() -> None:
    import time

    text = _corpus()["python"] * 4  # ~120 KB
    t0 = time.perf_counter()
    count_tokens(text)
    assert time.perf_counter() - t0 < 0.25
