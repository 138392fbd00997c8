"""Contextual text for embeddings, the cache key, and the resource path helper."""

from __future__ import annotations

import enum
import hashlib
import sys
from pathlib import Path

import pytest

from desktop.memory.embedding.contextual import MAX_PREFIX_CHARS, cache_key, contextual_text
from desktop.paths import resource_path


def test_prefix_lines_then_content() -> None:
    text = contextual_text(
        "Always flush before close.",
        memory_type="gotcha",
        files=["src/io/writer.py"],
        module="io",
        chunk_prefix="function close_writer",
    )
    assert text == (
        "File: src/io/writer.py\nModule: io\nType: gotcha\nfunction close_writer\n\nAlways flush before close."
    )


def test_no_context_returns_content_unchanged() -> None:
    assert contextual_text("  plain text \n", memory_type=None) == "plain text"


def test_many_files_are_capped_and_deduplicated() -> None:
    files = ["./a.py", "a.py", "b\\c.py", "d.py", "e.py", "f.py"]
    text = contextual_text("x", memory_type="decision", files=files)
    first = text.splitlines()[0]
    assert first == "Files: a.py, b/c.py, d.py (+2 more)"


def test_prefix_stays_short_with_huge_fields() -> None:
    text = contextual_text(
        "content",
        memory_type="convention " * 50,
        files=["deep/" * 60 + "file.py"] * 1 + [f"f{i}.py" for i in range(100)],
        module="m" * 500,
        chunk_prefix="c" * 500,
    )
    prefix, _, body = text.partition("\n\n")
    assert body == "content"
    assert len(prefix) <= MAX_PREFIX_CHARS
    assert "file.py" in prefix  # the tail of a long path survives


def test_newlines_in_fields_cannot_break_the_layout() -> None:
    text = contextual_text("body", memory_type="a\n\nb", module="x\ny", files=["p\nq.py"])
    assert text.split("\n\n") == ["File: p q.py\nModule: x y\nType: a b", "body"]


def test_enum_memory_type_and_single_path_string() -> None:
    class Kind(enum.Enum):
        ERROR_PATTERN = "error_pattern"

    text = contextual_text("c", memory_type=Kind.ERROR_PATTERN, files="one.py")  # type: ignore[arg-type]
    assert text == "File: one.py\nType: error pattern\n\nc"


def test_cache_key_is_sha256_hex_and_separates_fields() -> None:
    key = cache_key("hello", "local:all-minilm-l6-v2-int8", 384)
    assert len(key) == 64 and int(key, 16) >= 0
    assert key == cache_key("hello", "local:all-minilm-l6-v2-int8", 384)
    assert key != cache_key("hello", "local:all-minilm-l6-v2-int8", 256)
    assert key != cache_key("hello", "ollama:nomic-embed-text", 384)
    assert key != cache_key("hello ", "local:all-minilm-l6-v2-int8", 384)
    # A naive "text:model:dims" join would collide on these two.
    assert cache_key("a:b", "c", 1) != cache_key("a", "b:c", 1)
    expected = hashlib.sha256(b"m\x007\x00t").hexdigest()
    assert cache_key("t", "m", 7) == expected


def test_cache_key_survives_lone_surrogates() -> None:
    assert len(cache_key("bad \udcff bytes", "m", 1)) == 64
    with pytest.raises(ValueError):
        cache_key("x", "m", -1)


def test_resource_path_from_source_tree() -> None:
    path = resource_path("models", "all-minilm-l6-v2", "tokenizer.json")
    assert path == Path(__file__).resolve().parents[2] / "resources/models/all-minilm-l6-v2/tokenizer.json"
    assert path.is_file()


def test_resource_path_when_frozen(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert resource_path("models", "x.json") == tmp_path / "resources" / "models" / "x.json"
