"""The bundled all-MiniLM-L6-v2 (int8 ONNX) provider: shape, quality, robustness."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from desktop.memory.embedding import local
from desktop.memory.embedding.base import EmbeddingError, EmbeddingProvider
from desktop.memory.embedding.local import (
    LOCAL_DIMS,
    LOCAL_DYNAMIC_INT8_MODEL_ID,
    LOCAL_MODEL_ID,
    MAX_RUN_TOKENS,
    LocalMiniLMProvider,
    dynamic_int8_model_path,
    package_model_path,
)

needs_int8_model = pytest.mark.skipif(
    not dynamic_int8_model_path().is_file(), reason="model.int8.onnx not built (packaging/quantize_model.py)"
)


def test_model_signature_has_the_bert_inputs(local_provider: LocalMiniLMProvider) -> None:
    assert set(local_provider.input_names) == {"input_ids", "attention_mask", "token_type_ids"}


def test_meets_the_provider_protocol(local_provider: LocalMiniLMProvider) -> None:
    assert isinstance(local_provider, EmbeddingProvider)
    assert LOCAL_MODEL_ID == "local:all-minilm-l6-v2-int8"
    assert LOCAL_DYNAMIC_INT8_MODEL_ID == "local:all-minilm-l6-v2-int8dyn"
    expected = LOCAL_DYNAMIC_INT8_MODEL_ID if dynamic_int8_model_path().is_file() else LOCAL_MODEL_ID
    assert local_provider.model_id == expected
    assert local_provider.dims == LOCAL_DIMS == 384
    assert local_provider.available()


def test_shape_dtype_and_unit_norm(local_provider: LocalMiniLMProvider) -> None:
    texts = ["short", "a somewhat longer sentence about SQLite write-ahead logging", "x " * 50]
    vectors = local_provider.embed(texts)
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert vectors.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_empty_input_gives_empty_matrix(local_provider: LocalMiniLMProvider) -> None:
    assert local_provider.embed([]).shape == (0, 384)


def test_bare_string_is_rejected(local_provider: LocalMiniLMProvider) -> None:
    with pytest.raises(EmbeddingError) as info:
        local_provider.embed("not a list")
    assert info.value.code == "invalid_input"


def test_paraphrases_are_closer_than_unrelated_texts(local_provider: LocalMiniLMProvider) -> None:
    a, b, c, d = local_provider.embed(
        [
            "How do I reset my password?",
            "Steps to recover a forgotten password",
            "The weather in Paris is sunny today",
            "Compile the Rust crate in release mode",
        ]
    )
    paraphrase = float(a @ b)
    unrelated = max(float(a @ c), float(a @ d), float(b @ c), float(b @ d))
    assert paraphrase > 0.6
    assert unrelated < 0.3
    assert paraphrase - unrelated > 0.4


def test_code_query_finds_its_memory(local_provider: LocalMiniLMProvider) -> None:
    memories = [
        "Retries for HTTP calls live in net/retry.py; use exponential backoff with jitter.",
        "The settings dialog is built with Qt Designer files under ui/forms.",
        "Database migrations are append-only; never edit an applied migration.",
    ]
    query = local_provider.embed(["where is the retry logic for network requests"])[0]
    scores = local_provider.embed(memories) @ query
    assert int(np.argmax(scores)) == 0


def test_deterministic_across_two_sessions(local_provider: LocalMiniLMProvider) -> None:
    texts = ["determinism check", "Ünïcödé and emoji 🚀 too"]
    fresh = LocalMiniLMProvider()
    np.testing.assert_allclose(local_provider.embed(texts), fresh.embed(texts), atol=1e-6)


def test_batching_and_order_do_not_change_vectors(local_provider: LocalMiniLMProvider) -> None:
    texts = [f"memory number {i} " + "word " * (i % 17) for i in range(70)]
    together = local_provider.embed(texts)
    small = LocalMiniLMProvider(batch_size=3)
    np.testing.assert_allclose(small.embed(texts), together, atol=2e-5)
    singles = np.vstack([local_provider.embed([t]) for t in texts[:5]])
    np.testing.assert_allclose(singles, together[:5], atol=2e-5)


def test_empty_string_and_whitespace(local_provider: LocalMiniLMProvider) -> None:
    vectors = local_provider.embed(["", "   ", "\n\t"])
    assert vectors.shape == (3, 384)
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_non_ascii_and_emoji(local_provider: LocalMiniLMProvider) -> None:
    texts = ["naïve café façade", "日本語のテキスト", "🔥🐛💥", "Ошибка при сохранении файла", "\u0000\ufffd"]
    vectors = local_provider.embed(texts)
    assert vectors.shape == (5, 384)
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_very_long_text_is_truncated_not_fatal(local_provider: LocalMiniLMProvider) -> None:
    head = "The writer thread commits every queued operation in one short transaction. "
    long_text = head * 2000  # ~150k characters, far beyond 256 tokens
    vectors = local_provider.embed([long_text, head * 40])
    assert vectors.shape == (2, 384)
    # Both are cut to the same first 256 tokens of repeated text: nearly identical.
    assert float(vectors[0] @ vectors[1]) > 0.99


def test_concurrent_first_use_loads_once() -> None:
    provider = LocalMiniLMProvider()
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(provider.embed(["concurrent load"]))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert len(results) == 4
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], atol=1e-6)


def test_missing_model_file_is_model_missing(tmp_path: Path) -> None:
    provider = LocalMiniLMProvider(model_path=tmp_path / "nope.onnx")
    assert not provider.available()
    with pytest.raises(EmbeddingError) as info:
        provider.embed(["hello"])
    assert info.value.code == "model_not_found"


def test_corrupt_model_file_is_model_missing(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"this is not an onnx graph")
    with pytest.raises(EmbeddingError) as info:
        LocalMiniLMProvider(model_path=bad).embed(["hello"])
    assert info.value.code == "model_not_found"


def test_parallel_batches_give_the_same_vectors(local_provider: LocalMiniLMProvider) -> None:
    texts = [f"parallel batch {i} " + "token " * (i % 11) for i in range(40)]
    serial = LocalMiniLMProvider(batch_size=4, parallel_batches=1).embed(texts)
    parallel = LocalMiniLMProvider(batch_size=4, parallel_batches=2).embed(texts)
    np.testing.assert_allclose(parallel, serial, atol=1e-6)


def test_model_id_follows_the_model_file(tmp_path: Path) -> None:
    # Vectors of the two files are never comparable, so each has its own id.
    assert LocalMiniLMProvider(package_model_path()).model_id == LOCAL_MODEL_ID
    assert LocalMiniLMProvider(tmp_path / "model.int8.onnx").model_id == LOCAL_DYNAMIC_INT8_MODEL_ID
    assert LocalMiniLMProvider(tmp_path / "other.onnx").model_id == LOCAL_MODEL_ID


def test_default_prefers_the_int8_model_when_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = tmp_path / "model.int8.onnx"
    monkeypatch.setattr(local, "dynamic_int8_model_path", lambda: built)
    assert local.default_model_path() == package_model_path()
    assert LocalMiniLMProvider().model_id == LOCAL_MODEL_ID
    built.write_bytes(b"stand-in")
    assert local.default_model_path() == built
    assert LocalMiniLMProvider().model_id == LOCAL_DYNAMIC_INT8_MODEL_ID


@needs_int8_model
def test_int8_model_vector_does_not_depend_on_batchmates() -> None:
    # Activations are quantised with one scale per run: the provider runs one text per run.
    provider = LocalMiniLMProvider(dynamic_int8_model_path(), batch_size=32)
    texts = ["the writer thread commits", "x " * 200, "short", "Ünïcödé 🚀", *[f"memory {i}" for i in range(40)]]
    together = provider.embed(texts)
    alone = np.vstack([provider.embed([t]) for t in texts[:4]])
    np.testing.assert_allclose(alone, together[:4], atol=1e-6)


@needs_int8_model
def test_int8_model_stays_close_to_the_package_model() -> None:
    texts = [
        "How do I reset my password?",
        "Retries for HTTP calls live in net/retry.py; use exponential backoff with jitter.",
        "def verify_jwt(token: str) -> Claims: ...",
        "Database migrations are append-only; never edit an applied migration. " * 3,
        "日本語のテキスト",
    ]
    cosines = np.einsum(
        "ij,ij->i",
        LocalMiniLMProvider(package_model_path()).embed(texts),
        LocalMiniLMProvider(dynamic_int8_model_path()).embed(texts),
    )
    assert cosines.mean() >= 0.99
    assert cosines.min() >= 0.97


def test_a_run_holds_a_bounded_number_of_tokens() -> None:
    # 32 texts of 256 tokens in one run kept 1.2 GB in onnxruntime's arena; long texts now run a few
    # at a time, short ones still 32 at a time, and a text's vector does not depend on its run.
    provider = LocalMiniLMProvider(package_model_path(), parallel_batches=1)
    runs: list[tuple[int, int]] = []
    real = provider._embed_run

    def spy(session: Any, encodings: list[Any]) -> Any:
        runs.append((len(encodings), max(len(e.ids) for e in encodings)))
        return real(session, encodings)

    provider._embed_run = spy  # type: ignore[method-assign]
    texts = ["word " * 300] * 10 + [f"short memory {i}" for i in range(40)]
    vectors = provider.embed(texts)
    assert max(count * width for count, width in runs) <= MAX_RUN_TOKENS
    assert max(count for count, _ in runs) == 32
    assert sum(count for count, _ in runs) == len(texts)
    np.testing.assert_allclose(vectors[[0, 12]], provider.embed([texts[0], texts[12]]), atol=2e-5)
