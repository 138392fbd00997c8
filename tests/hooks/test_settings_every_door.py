"""A setting chosen in the app is what every other door uses: a hook process, the MCP server, the warm service.

The settings are chosen in the app's own Settings dialog (accepted as a user would) and saved
as the app saves them; each door is a real process or the real service, started afterwards
(or, for the warm service, already running). The models are a fake Ollama on 127.0.0.1
speaking its real API, so what each door asked of which model is on record. Before issue 29,
hooks and the warm service built ``Settings(data_dir=...)``: a session ending through a hook
never reached the chosen model, and the warm service embedded with the bundled model.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from PySide6.QtWidgets import QDialog

from desktop.composition import Engram, load_settings
from tests.agents.fake_ollama import MODEL, FakeOllama, text_turn
from tests.hooks.conftest import run_hook

REPO = Path(__file__).resolve().parents[2]
EMBED_MODEL = "nomic-embed-text"


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    """The user's Ollama: a chat model that proposes no memory, and an embedding model."""
    srv = FakeOllama(lambda body, n: text_turn('{"memories": []}')).start()
    yield srv
    srv.stop()


@pytest.fixture
def choose(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> Callable[[Path, str], None]:
    """Choose Ollama (chat and embeddings) at ``host`` in the app's Settings dialog, as a user does."""
    from desktop.ui.dialogs.settings import SettingsDialog
    from desktop.ui.main_window import MainWindow

    def choose(data_dir: Path, host: str) -> None:
        def accept(dialog: SettingsDialog) -> int:
            dialog.llm.setCurrentIndex(dialog.llm.findData("ollama"))
            dialog.llm_model.setText(MODEL)
            dialog.embedder.setCurrentIndex(dialog.embedder.findData("ollama"))
            dialog.embed_model.setText(EMBED_MODEL)
            dialog.ollama_host.setText(host)
            return QDialog.DialogCode.Accepted.value
        monkeypatch.setattr(SettingsDialog, "exec", accept)
        window = MainWindow(Engram.for_data_dir(data_dir), onboarding=False, background=False)
        qtbot.addWidget(window)
        window.flows.settings()
        qtbot.waitUntil(lambda: load_settings(data_dir).ollama_host == host, timeout=5000)
        window.close()
    return choose


def _wait(condition: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def _bash(cwd: Path, sid: str, command: str, output: str, code: int) -> dict[str, Any]:
    return {"session_id": sid, "cwd": str(cwd), "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}, "tool_use_id": f"call-{command}",
            "tool_response": {"stdout": output, "stderr": "", "exit_code": code}}


def test_a_session_ended_through_a_hook_reaches_the_model_chosen_in_the_app(
        choose: Callable[[Path, str], None], ollama: FakeOllama, hook_env: dict[str, str], payments_dir: Path,
        data_dir: Path, memories: dict[str, int]) -> None:
    choose(data_dir, ollama.host)
    for command, output, code in (("npm test", "npm ERR! missing script: test", 1),
                                  ("npm run test:unit", "12 passing", 0)):
        done = run_hook(hook_env, "after-tool", _bash(payments_dir, "hooked-1", command, output, code))
        assert (done.returncode, done.stderr) == (0, "")
    done = run_hook(hook_env, "session-end", {"session_id": "hooked-1", "cwd": str(payments_dir),
                                             "hook_event_name": "SessionEnd", "reason": "exit"}, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    # The session's evidence went to the chosen model, once, as a memory synthesis request (from the
    # process the session-end hook hands its work to: the agent does not wait for it).
    assert _wait(lambda: bool(ollama.requests), 60), "the session never reached the chosen model"
    assert [r["model"] for r in ollama.requests] == [MODEL]
    system = ollama.requests[0]["messages"][0]["content"]
    assert "evidence of a coding-agent session" in system and "npm run test:unit" in json.dumps(ollama.requests)


def test_the_mcp_server_embeds_with_the_provider_chosen_in_the_app(
        choose: Callable[[Path, str], None], ollama: FakeOllama, payments_dir: Path, data_dir: Path,
        memories: dict[str, int]) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    choose(data_dir, ollama.host)
    params = StdioServerParameters(command=sys.executable, cwd=str(REPO), env={**os.environ, "PYTHONPATH": str(REPO)},
                                   args=["-m", "desktop.cli.main", "mcp", "--project", str(payments_dir),
                                         "--data-dir", str(data_dir)])

    async def session() -> str:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            found = await client.call_tool("search_memory", {"query": "refund webhook idempotent"})
            for _ in range(300):  # search by meaning is built in the background, with the chosen model
                if ollama.embeds:
                    break
                await anyio.sleep(0.1)
            return "\n".join(getattr(c, "text", "") for c in found.content)

    answer = anyio.run(session)
    assert f"#{memories['prompt']}" in answer
    assert ollama.embeds and {e["model"] for e in ollama.embeds} == {EMBED_MODEL}


def test_the_warm_service_embeds_with_the_provider_chosen_in_the_app_even_while_it_runs(
        choose: Callable[[Path, str], None], ollama: FakeOllama, payments_dir: Path, data_dir: Path,
        memories: dict[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.agents.hooks import live, service

    monkeypatch.setattr(live, "_warm", None)  # the service keeps observers warm process-wide: undone after
    choose(data_dir, ollama.host)
    svc = service.HookService(data_dir, idle=60)
    prompt = {"agent": "claude-code", "event": "prompt", "token_budget": None, "payload": {
        "session_id": "warm-1", "cwd": str(payments_dir), "hook_event_name": "UserPromptSubmit",
        "prompt": "Is the refund webhook handler idempotent?"}}
    later = FakeOllama(lambda body, n: text_turn('{"memories": []}')).start()
    try:
        assert f'<memory id="{memories["prompt"]}"' in svc.answer(prompt)
        assert _wait(lambda: bool(ollama.embeds)), "the warm search never embedded with the chosen provider"
        assert {e["model"] for e in ollama.embeds} == {EMBED_MODEL}
        # The user picks another Ollama while the service runs: the next hook is answered with it.
        choose(data_dir, later.host)
        prompt["payload"]["session_id"] = "warm-2"
        assert f'<memory id="{memories["prompt"]}"' in svc.answer(prompt)
        assert _wait(lambda: bool(later.embeds)), "the running service kept the settings it started with"
    finally:
        svc.close()
        later.stop()
