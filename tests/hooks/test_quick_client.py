"""The lean hook client (issue 25, item 7): a warm service answers a hook process that imports
almost nothing; anything it cannot answer goes to the full runner with the payload intact."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from desktop.agents.hooks.client import hook_options, quick_hook, socket_path

#: Wraps the lean client so that the process writes which modules it had loaded when the client
#: returned (the process exits right after, so it is written there), to the file named first.
_SPY = """
import desktop.agents.hooks.client as client
real = client.quick_hook
def spy(argv, stdin):
    done = real(argv, stdin)
    with open(sys.argv[1], "w") as f:
        f.write(("quick " if done else "full ") + " ".join(sorted(sys.modules)))
    return done
client.quick_hook = spy
"""
#: Runs ``engram hook`` as the console script does.
PROBE = "import sys\n" + _SPY + "from desktop.cli.main import main\nsys.exit(main(sys.argv[2:]))\n"
#: Runs the installed hook command's own process (``python -I -S``: no ``site``, as ``engram_hook.py``),
#: Engram's folder given second.
LEAN_PROBE = ("import sys\nsys.path.insert(0, sys.argv[2])\n" + _SPY
              + "from desktop.cli.main import run_hook\nsys.exit(run_hook(sys.argv[3:], site_missing=True))\n")

#: Runs the installed hook command's own process answering inline (no service): the text it
#: answers, then the modules it had loaded, go to the file named first.
INLINE_PROBE = ("import sys\nsys.path.insert(0, sys.argv[2])\n"
                "import desktop.agents.hooks.runner as runner\n"
                "real = runner.run\n"
                "def spy(*args, **kwargs):\n"
                "    out = real(*args, **kwargs)\n"
                "    with open(sys.argv[1], 'w') as f:\n"
                "        f.write(out.replace(chr(10), ' ') + chr(10) + ' '.join(sorted(sys.modules)))\n"
                "    return out\n"
                "runner.run = spy\n"
                "from desktop.cli.main import run_hook\nsys.exit(run_hook(sys.argv[3:], site_missing=True))\n")


@pytest.fixture
def service(hook_env: dict[str, str], data_dir: Path) -> Iterator[dict[str, str]]:
    env = {k: v for k, v in hook_env.items() if k != "ENGRAM_HOOK_NO_SERVICE"}
    server = subprocess.Popen(["engram", "serve", "--data-dir", str(data_dir), "--idle", "30", "--no-warm-search"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not socket_path(data_dir).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert socket_path(data_dir).exists()
        yield env
    finally:
        server.terminate()
        server.wait(10)


def _probe(env: dict[str, str], tmp_path: Path, data_dir: Path, event: str, payload: Mapping[str, object]
           ) -> tuple[str, set[str], str]:
    seen = tmp_path / "modules.txt"
    done = subprocess.run([sys.executable, "-c", PROBE, str(seen), "hook", event, "--data-dir", str(data_dir)],
                          input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    assert done.returncode == 0 and done.stderr == ""
    path, *modules = seen.read_text(encoding="utf-8").split()
    return path, set(modules), done.stdout


def _installed_hook(probe: str, seen: Path, env: dict[str, str], data_dir: Path, payments_dir: Path,
                    session_id: str) -> subprocess.CompletedProcess[str]:
    """Run the installed hook command's own process (``python -I -S``) under ``probe`` before an edit of
    ``core/payments.py``; the probe writes what it saw to ``seen``."""
    payload = {"session_id": session_id, "cwd": str(payments_dir), "hook_event_name": "PreToolUse",
               "tool_name": "Edit", "tool_use_id": session_id,
               "tool_input": {"file_path": str(payments_dir / "core" / "payments.py"), "old_string": "a",
                              "new_string": "b"}}
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(seen), root, "before-tool",
                           "--data-dir", str(data_dir)], input=json.dumps(payload), capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 0 and done.stderr == ""
    return done


def test_a_warm_service_answers_a_hook_that_imports_almost_nothing(service: dict[str, str], tmp_path: Path,
                                                                   data_dir: Path, payments_dir: Path,
                                                                   memories: dict[str, int]) -> None:
    payload = {"session_id": "q-1", "cwd": str(payments_dir), "hook_event_name": "PreToolUse",
               "tool_name": "Edit", "tool_use_id": "t1",
               "tool_input": {"file_path": str(payments_dir / "core" / "payments.py"), "old_string": "a",
                              "new_string": "b"}}
    path, modules, out = _probe(service, tmp_path, data_dir, "before-tool", payload)
    assert path == "quick"
    assert f"#{memories['gotcha']}" in out or f'id=\\"{memories["gotcha"]}\\"' in out, out
    assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    # what the full runner and the core would have cost this process
    heavy = {"argparse", "logging", "threading", "typing", "hashlib", "apsw", "sqlite3", "desktop.memory",
             "desktop.settings", "desktop.agents.hooks.runner"}
    assert not modules & heavy, sorted(modules & heavy)


def test_the_installed_hook_command_reads_writes_and_connects_without_json_re_enum_or_socket(
        service: dict[str, str], tmp_path: Path, data_dir: Path, payments_dir: Path,
        memories: dict[str, int]) -> None:
    """Those modules are ~30 ms of a hook process that lives ~50 ms (``lean_json``, ``_socket``)."""
    seen = tmp_path / "modules.txt"
    done = _installed_hook(LEAN_PROBE, seen, service, data_dir, payments_dir, "q-2")
    path, *modules = seen.read_text(encoding="utf-8").split()
    assert path == "quick" and f"#{memories['gotcha']}" in done.stdout.replace('id=\\"', "#")
    assert json.loads(done.stdout)["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    costly = {"json", "re", "enum", "socket", "selectors", "typing", "site"}
    assert not set(modules) & costly, sorted(set(modules) & costly)


def test_a_hook_answered_inline_loads_neither_openssl_nor_the_utterance_rules(
        hook_env: dict[str, str], tmp_path: Path, data_dir: Path, payments_dir: Path,
        memories: dict[str, int]) -> None:
    """The first tool call of a day waits for the whole runner: OpenSSL (``hashlib``, ``hmac``) and the
    utterance rules (cues in nine languages) were 15-25 ms of it, for nothing a tool call needs."""
    seen = tmp_path / "inline.txt"
    _installed_hook(INLINE_PROBE, seen, {**hook_env, "ENGRAM_HOOK_NO_SERVICE": "1"}, data_dir, payments_dir, "q-4")
    said, modules = seen.read_text(encoding="utf-8").split("\n", 1)
    assert f"#{memories['gotcha']}" in said.replace('id="', "#"), said  # answered, inline
    costly = {"_hashlib", "hashlib", "hmac", "desktop.memory.observer.utterances", "desktop.memory.observer.cues"}
    assert not set(modules.split()) & costly, sorted(set(modules.split()) & costly)


def test_a_session_start_is_answered_by_the_service_after_the_last_session_end(
        service: dict[str, str], tmp_path: Path, data_dir: Path, payments_dir: Path,
        memories: dict[str, int]) -> None:
    from desktop.agents.hooks.finalising import hold

    held = hold(data_dir)  # a detached session end still running: the start waits for it (a little)
    assert held is not None
    try:
        start = {"session_id": "q-3", "cwd": str(payments_dir), "hook_event_name": "SessionStart",
                 "source": "startup"}
        began = time.monotonic()
        path, _, out = _probe(service, tmp_path, data_dir, "session-start", start)
        assert path == "quick" and f"#{memories['pinned']}" in out.replace('id=\\"', "#")
        assert time.monotonic() - began >= 2.4  # it waited its share of the budget before asking
    finally:
        import os

        os.close(held)


def test_a_hook_with_no_service_goes_to_the_full_runner(
        hook_env: dict[str, str], tmp_path: Path, data_dir: Path, payments_dir: Path,
        memories: dict[str, int]) -> None:
    env = {k: v for k, v in hook_env.items() if k != "ENGRAM_HOOK_NO_SERVICE"}
    env["ENGRAM_SERVE_IDLE"] = "3"  # the service the full runner starts goes away soon
    prompt = {"session_id": "q-2", "cwd": str(payments_dir), "hook_event_name": "UserPromptSubmit",
              "prompt": "Is the refund webhook handler idempotent?"}
    path, _, out = _probe(env, tmp_path, data_dir, "prompt", prompt)
    assert path == "full" and f'id=\\"{memories["prompt"]}\\"' in out  # answered inline, payload intact


def test_what_the_lean_client_leaves_to_the_full_runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    body = json.dumps({"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "PreToolUse",
                       "tool_name": "Bash", "tool_input": {"command": "ls"}}).encode()
    data = ["--data-dir", str(tmp_path / "data")]
    monkeypatch.delenv("ENGRAM_HOOK_NO_SERVICE", raising=False)
    assert not quick_hook(["before-tool", *data], body)                    # no service listens
    assert not quick_hook(["session-start", *data], body.replace(b"PreToolUse", b"SessionStart"))  # no service
    assert not quick_hook(["before-tool", "--verbose", *data], body)       # an option it does not know
    assert not quick_hook(["before-tool", *data], b"{not json")             # the runner logs why
    monkeypatch.setenv("ENGRAM_HOOK_NO_SERVICE", "1")
    assert not quick_hook(["before-tool", *data], body)
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize(("argv", "expected"), [
    (["before-tool"], {"event": "before-tool"}),
    (["PreToolUse", "--agent", "codex", "--data-dir=/d", "--budget", "1.5"],
     {"event": "PreToolUse", "agent": "codex", "data-dir": "/d", "budget": "1.5"}),
    (["--tokens", "900", "prompt"], {"event": "prompt", "tokens": "900"}),
    (["prompt", "stop"], None),        # two events
    (["prompt", "--agent"], None),     # an option without its value
    (["-h"], None),
    ([], None),
])
def test_hook_command_lines(argv: list[str], expected: dict[str, str] | None) -> None:
    assert hook_options(argv) == expected
