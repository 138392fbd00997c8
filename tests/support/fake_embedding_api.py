"""Fake embedding HTTP APIs on 127.0.0.1, speaking the real wire formats.

Ollama's ``/api/embed``, ``/api/tags`` and ``/api/version``; OpenAI's
``/v1/embeddings`` and ``/v1/models`` (with bearer-key checking). Tests import from
here rather than from a ``conftest`` module, whose name is shared by every test folder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np

from tests.support.loopback import LoopbackServer


def fake_vector(text: str, dims: int) -> list[float]:
    """Return a deterministic, unnormalised pseudo-embedding of ``text``."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    return (np.random.default_rng(seed).normal(size=dims) * 3.0).round(6).tolist()


@dataclass
class FakeServer:
    """A running fake HTTP API and what it has seen."""

    url: str
    dims: int
    models: list[str]
    requests: list[tuple[str, str, dict[str, Any], dict[str, str]]] = field(default_factory=list)
    # Set to make the next /embed(dings) answer with this (status, body).
    override: tuple[int, Any] | None = None


def serve(
    route: Callable[[FakeServer, str, str, dict[str, Any], dict[str, str]], tuple[int, Any]],
    dims: int,
    models: list[str],
    prefix: str,
) -> Iterator[FakeServer]:
    """Run a ThreadingHTTPServer on a free loopback port until the fixture ends."""
    state = FakeServer(url="", dims=dims, models=models)

    class Handler(BaseHTTPRequestHandler):
        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            headers = {k.lower(): v for k, v in self.headers.items()}
            state.requests.append((method, self.path, body, headers))
            status, payload = route(state, method, self.path, body, headers)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

    with LoopbackServer(Handler) as server:
        state.url = server.url + prefix
        yield state


def ollama_route(
    state: FakeServer, method: str, path: str, body: dict[str, Any], headers: dict[str, str]
) -> tuple[int, Any]:
    """Answer like Ollama 0.x does."""
    if method == "GET" and path == "/api/version":
        return 200, {"version": "0.12.0"}
    if method == "GET" and path == "/api/tags":
        return 200, {"models": [{"name": m, "model": m, "size": 1, "digest": "0" * 64} for m in state.models]}
    if method == "POST" and path == "/api/embed":
        if state.override is not None:
            return state.override
        model = body.get("model", "")
        full = model if ":" in model else f"{model}:latest"
        if full not in state.models:
            return 404, {"error": f'model "{model}" not found, try pulling it first'}
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        return 200, {
            "model": model,
            "embeddings": [fake_vector(t, state.dims) for t in texts],
            "total_duration": 1000,
            "load_duration": 10,
            "prompt_eval_count": len(texts),
        }
    return 404, {"error": "not found"}


def openai_route(
    state: FakeServer, method: str, path: str, body: dict[str, Any], headers: dict[str, str]
) -> tuple[int, Any]:
    """Answer like the OpenAI embeddings API, with bearer-key checking."""
    if headers.get("authorization", "") != "Bearer sk-test-123":
        return 401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
    if method == "GET" and path == "/v1/models":
        return 200, {"object": "list", "data": [{"id": m, "object": "model"} for m in state.models]}
    if method == "POST" and path == "/v1/embeddings":
        if state.override is not None:
            return state.override
        if body.get("model") not in state.models:
            return 404, {"error": {"message": f"The model `{body.get('model')}` does not exist"}}
        dims = int(body.get("dimensions") or state.dims)
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(t, dims)} for i, t in enumerate(body["input"])
        ]
        # Real servers may return items in any order; `index` is what counts.
        data.reverse()
        return 200, {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }
    return 404, {"error": {"message": "not found"}}
