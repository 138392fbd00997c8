"""Issue 14: the MCP server answers every malformed JSON-RPC line (real process over stdio)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.agents.mcp_framing import INVALID_REQUEST, PARSE_ERROR, check_line

REPO = Path(__file__).resolve().parents[2]


class _Server:
    def __init__(self, tmp: Path) -> None:
        proj = tmp / "proj"
        proj.mkdir()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "desktop.cli.main", "mcp", "--project", str(proj), "--data-dir", str(tmp / "d")],
            cwd=str(REPO), env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))

    def send(self, raw: bytes | str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()
        return self.replies.get(timeout=60)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)
        self.reader.join(10)  # the server's stdout is at EOF once it exited
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[_Server]:
    s = _Server(tmp_path)
    yield s
    s.close()


def _req(mid: int, method: str, params: dict[str, Any] | None = None) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": mid, "method": method, "params": params or {}})


def test_every_malformed_line_is_answered_and_the_session_goes_on(server: _Server) -> None:
    assert server.send(b"{not json")["error"]["code"] == PARSE_ERROR
    assert server.send(b"\xff\xfe garbage")["error"]["code"] == PARSE_ERROR
    assert server.send("[" * 5000 + "]" * 5000)["error"]["code"] == PARSE_ERROR
    batch = server.send(json.dumps([json.loads(_req(1, "ping"))]))
    assert batch["error"]["code"] == INVALID_REQUEST and batch["id"] is None
    assert server.send("42")["error"]["code"] == INVALID_REQUEST
    wrong = server.send(json.dumps({"jsonrpc": "1.0", "id": 7, "method": "ping"}))
    assert wrong["error"]["code"] == INVALID_REQUEST and wrong["id"] == 7
    assert server.send(json.dumps({"jsonrpc": "2.0", "id": 8, "method": 5}))["id"] == 8
    init = server.send(_req(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                              "clientInfo": {"name": "t", "version": "1"}}))
    assert "result" in init
    server.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')  # type: ignore[union-attr]
    # A lone surrogate inside a real tool call: answered, not dropped.
    lone = ('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search_memory",'
            '"arguments":{"query":"cache \\ud800 key"}}}')
    answer = server.send(lone)
    assert answer["id"] == 9 and "result" in answer
    assert server.send(_req(10, "ping"))["id"] == 10  # still serving


def test_check_line_unit_cases() -> None:
    assert check_line(b"")[1] is not None
    good, err = check_line(_req(1, "ping"))
    assert err is None and good is not None
    assert json.loads(check_line('{"jsonrpc":"2.0","id":true,"method":"ping"}')[1] or "{}")["error"]["code"] \
        == INVALID_REQUEST


def test_request_loop_survives_a_fuzzed_stream(tmp_path: Path) -> None:
    """Hypothesis draws a stream of lines; every line the framing rejects is answered, then a ping still is."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
    values = st.recursive(scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c,
                                                                                      max_size=3), max_leaves=8)
    lines = st.lists(st.one_of(
        st.text(max_size=60).filter(lambda t: "\n" not in t and "\r" not in t and t.strip() != ""),
        st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params"]), values, max_size=4).map(json.dumps),
        values.map(json.dumps)), min_size=1, max_size=25)
    runs = iter(range(100))

    @settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(lines)
    def run(stream: list[str]) -> None:
        folder = tmp_path / f"run{next(runs)}"
        folder.mkdir()
        server = _Server(folder)
        try:
            assert server.proc.stdin is not None
            rejected = sum(1 for line in stream if check_line(line)[1] is not None)
            for line in stream:
                server.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
            server.proc.stdin.flush()
            got = [server.send(_req(424242, "ping"))]
            while not any(g.get("id") == 424242 for g in got):  # the server still answers after the stream
                got.append(server.replies.get(timeout=30))
            errors = [g for g in got if g.get("error", {}).get("code") in (PARSE_ERROR, INVALID_REQUEST)]
            assert len(errors) >= rejected
        finally:
            server.close()
    run()
