"""Installation checks: does every native part the app needs at run time actually load?

``engram doctor`` (and any other door) runs these after the database check. A wheel
that lost its tokenizer, a missing grammar wheel or a sqlite-vec build for the wrong
platform shows up here as a failed check with a stable code, instead of as a
traceback on the first search. Each check loads the real thing (a tokenizer file, an
ONNX session that embeds one text, the vec0 extension in an in-memory database, a
parse per grammar), so it costs about a second; it is never run at start-up.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("engram.doctor")

__all__ = ["CHECKS", "InstallCheck", "run_install_checks"]

# Stable check names: the CLI/UI word them.
TOKENIZER = "tokenizer"
EMBEDDING_MODEL = "embedding_model"
VEC0 = "vec0"
GRAMMARS = "grammars"


@dataclass(frozen=True)
class InstallCheck:
    """The outcome of one check: ``ok`` with a ``detail`` (what loaded, or why it failed)."""

    name: str
    ok: bool
    detail: str


def _check_tokenizer() -> str:
    """Load the bundled tokenizer.json and encode one word."""
    from tokenizers import Tokenizer

    from desktop.memory.embedding.local import default_tokenizer_path

    path = default_tokenizer_path()
    if not path.is_file():
        raise FileNotFoundError(f"not found: {path}")
    tokens = Tokenizer.from_file(str(path)).encode("engram").ids
    if not tokens:
        raise ValueError(f"{path} encodes nothing")
    return str(path)


def _check_embedding_model() -> str:
    """Embed one text with the bundled local model and check the vector's shape."""
    from desktop.memory.embedding.local import LocalMiniLMProvider, default_model_path, dynamic_int8_model_path

    path = default_model_path()
    provider = LocalMiniLMProvider(path)
    vectors = provider.embed(["engram doctor"])
    if vectors.shape != (1, provider.dims):
        raise ValueError(f"unexpected output shape {vectors.shape}")
    # Not a failure: the package model works, only about half as fast (the int8-MatMul
    # model is a build product of packaging/quantize_model.py).
    slower = "" if path == dynamic_int8_model_path() else "; the faster int8 model was not built into this install"
    return f"{provider.model_id} ({path}{slower})"


def _check_vec0() -> str:
    """Load sqlite-vec into an in-memory database and ask its version."""
    import apsw

    from desktop.memory.store.connection import vec0_path

    conn = apsw.Connection(":memory:")
    try:
        conn.enable_load_extension(True)
        conn.load_extension(vec0_path())
        row = conn.execute("SELECT vec_version()").fetchone()
    finally:
        conn.close()
    return f"sqlite-vec {row[0] if row else '?'}"


def _check_grammars() -> str:
    """Parse a one-line snippet with every supported tree-sitter grammar."""
    from desktop.memory.graph.languages import SUPPORTED_LANGUAGES, parse

    missing = []
    for language in SUPPORTED_LANGUAGES:
        tree = parse(language, b"x")
        if tree is None:
            missing.append(language)
    if missing:
        raise ImportError(f"grammar not loadable: {', '.join(missing)}")
    return ", ".join(SUPPORTED_LANGUAGES)


CHECKS: tuple[tuple[str, Callable[[], str]], ...] = (
    (TOKENIZER, _check_tokenizer),
    (EMBEDDING_MODEL, _check_embedding_model),
    (VEC0, _check_vec0),
    (GRAMMARS, _check_grammars),
)


def run_install_checks() -> list[InstallCheck]:
    """Run every installation check; a failure is reported, never raised."""
    results = []
    for name, check in CHECKS:
        try:
            results.append(InstallCheck(name, True, check()))
        except Exception as exc:  # any failure to load is the finding, whatever its type
            detail = " ".join(f"{type(exc).__name__}: {exc}".split())
            # The report already says it in one line; the traceback only for `-v` debugging.
            log.debug("install check %s failed", name, exc_info=True)
            results.append(InstallCheck(name, False, detail))
    return results
