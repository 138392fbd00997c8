"""Fixtures for retrieval tests: a deterministic tiny embedder, the real local model, a fake Ollama.

The fake Ollama speaks the real HTTP API (``/api/tags``, ``/api/embed``,
``/api/chat``, ``/api/generate``) on 127.0.0.1 so the stages are exercised
through the real ``ollama`` client.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from desktop.memory.embedding.base import l2_normalize
from desktop.memory.embedding.local import LocalMiniLMProvider
from desktop.memory.store.database import Database
from tests.support.loopback import LoopbackServer
from tests.support.loopback import dead_url as loopback_dead_url

_WORD = re.compile(r"[a-z0-9]+")


class TinyProvider:
    """Bag-of-words hashing embedder (deterministic, 32 dims): texts sharing words are close."""

    def __init__(self, dims: int = 32, model_id: str = "test:tiny-bow") -> None:
        self.model_id = model_id
        self._dims = dims
        self.calls = 0
        self.texts: list[str] = []
        self.fail = False

    @property
    def dims(self) -> int:
        return self._dims

    def available(self) -> bool:
        return not self.fail

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from desktop.memory.embedding.base import EmbeddingError

        if self.fail:
            raise EmbeddingError("provider_unreachable", "tiny provider switched off")
        self.calls += 1
        self.texts.extend(texts)
        out = np.zeros((len(texts), self._dims), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                h = int.from_bytes(hashlib.sha1(word.encode()).digest()[:4], "little")
                out[i, h % self._dims] += 1.0 if (h >> 16) & 1 else -1.0
            out[i, 0] += 0.01  # never an all-zero row
        return l2_normalize(out)


@pytest.fixture(scope="session")
def minilm() -> LocalMiniLMProvider:
    """The real bundled model, loaded once per test session."""
    provider = LocalMiniLMProvider()
    provider.warm_up()
    return provider


@pytest.fixture
def tiny() -> TinyProvider:
    """A fresh deterministic 32-dim provider."""
    return TinyProvider()


@pytest.fixture
def project_db(tmp_path: Path) -> Iterator[Database]:
    """A fresh project database."""
    db = Database(tmp_path / "p.db").open()
    yield db
    db.close()


@dataclass
class FakeOllama:
    """A running fake Ollama and what it saw."""

    url: str
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    chat_reply: Callable[[dict[str, Any]], str] = lambda body: "[1]"
    generate_reply: str = "A memory about the answer."
    delay_s: float = 0.0
    models: list[str] = field(default_factory=lambda: ["qwen3:0.6b", "nomic-embed-text:latest"])


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    """Ollama's HTTP API on a free loopback port (chat, generate, embed, tags)."""
    state = FakeOllama(url="")

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client timed out first: expected
                pass

        def do_GET(self) -> None:
            state.requests.append((self.path, {}))
            if self.path == "/api/tags":
                self._reply(200, {"models": [{"name": m, "model": m, "size": 1, "digest": "0" * 64}
                                             for m in state.models]})
            else:
                self._reply(404, {"error": "not found"})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            state.requests.append((self.path, body))
            if state.delay_s:
                time.sleep(state.delay_s)
            now = "2025-01-01T00:00:00Z"
            if self.path == "/api/chat":
                self._reply(200, {"model": body["model"], "created_at": now, "done": True,
                                  "message": {"role": "assistant", "content": state.chat_reply(body)}})
            elif self.path == "/api/generate":
                self._reply(200, {"model": body["model"], "created_at": now, "done": True,
                                  "response": state.generate_reply})
            elif self.path == "/api/embed":
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vecs = TinyProvider().embed(texts).tolist()
                self._reply(200, {"model": body["model"], "embeddings": vecs})
            else:
                self._reply(404, {"error": "not found"})

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with LoopbackServer(Handler) as server:
        state.url = server.url
        yield state


@pytest.fixture
def dead_url() -> str:
    """A loopback URL where nothing listens."""
    return loopback_dead_url()
