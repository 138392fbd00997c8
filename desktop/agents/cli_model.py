"""The agent CLI the user is already logged into, as the observer's model (one JSON reply per call).

Memory synthesis needs a model; most people who use Engram already pay for one through
their coding agent. This adapter runs that agent headless, once per call, with no tools
and no project around it:

* Claude Code: ``claude -p --output-format json --json-schema SCHEMA --tools ""
  --no-session-persistence --system-prompt SYSTEM`` (the reply's ``structured_output``,
  else its ``result``);
* Codex: ``codex exec --ephemeral --skip-git-repo-check --sandbox read-only
  --output-schema FILE -o FILE -`` (the last message);
* Gemini CLI: ``gemini -p "" --output-format json --approval-mode plan`` with the prompt
  on stdin (the reply's ``response``).

Each runs in an empty temporary folder (no project files, no project hooks, and no
transcript of it lands in a project Engram watches) and reads the prompt from stdin.
The prompt is cut to the token cap (``Settings.memory_model_token_cap``, about four
characters a token), so one session never costs more than one capped request. What the
CLI reports it used (tokens, cost) is logged. The reply is the model's text: the
observer still parses it strictly and checks every memory against the session's evidence.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

from desktop.memory.privacy.boundary import redact_then_cut

log = logging.getLogger("engram.agents")

#: Settings value -> (the CLI's program name, how it is shown).
AGENT_CLIS: Final = {"claude-cli": ("claude", "Claude Code"), "codex-cli": ("codex", "Codex"),
                     "gemini-cli": ("gemini", "Gemini CLI")}
DEFAULT_TOKEN_CAP: Final = 6000
CLI_TIMEOUT_S: Final = 90.0
CHARS_PER_TOKEN: Final = 4


class AgentCLIError(RuntimeError):
    """The CLI failed, timed out, or answered in a form this adapter cannot read; ``code`` says which."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    """On Linux the CLI is killed if Engram's process dies (a hook cut at its budget): no orphan spends."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class AgentCLIModel:
    """``complete(system, prompt) -> str`` through one headless run of an agent CLI."""

    def __init__(self, kind: str, executable: str | Path, *, model: str = "", schema: dict[str, Any] | None = None,
                 token_cap: int = DEFAULT_TOKEN_CAP, timeout: float = CLI_TIMEOUT_S,
                 env: dict[str, str] | None = None, extra_args: list[str] | None = None) -> None:
        """``kind`` is a key of :data:`AGENT_CLIS`; ``schema`` the reply's JSON Schema (passed to the CLIs
        that enforce one); ``env`` replaces the environment the CLI runs with; ``extra_args`` go after
        the CLI's own (a Codex profile or provider, ``-c key=value``)."""
        if kind not in AGENT_CLIS:
            raise ValueError(f"unknown agent CLI {kind!r}")
        self.kind = kind
        self.executable = str(executable)
        self.model = model
        self.schema = schema
        self.token_cap = max(500, int(token_cap))
        self.timeout = timeout
        self.env = env
        self.extra_args = list(extra_args or [])
        self.name = f"{kind}:{model}" if model else kind
        self.last_usage: dict[str, Any] = {}

    def capped(self, prompt: str) -> str:
        """The prompt cut to the token cap (what is sent is never more than the user agreed to pay for)."""
        limit = self.token_cap * CHARS_PER_TOKEN
        if len(prompt) <= limit:
            return prompt
        return prompt[:limit] + "\n[... cut to the token cap ...]"

    def complete(self, system: str, prompt: str) -> str:
        """Run the CLI once; the model's reply text. Raises AgentCLIError on any failure."""
        text = self.capped(prompt)
        with tempfile.TemporaryDirectory(prefix="engram-model-") as folder:
            work = Path(folder)
            argv, stdin = self._argv(work, system, text)
            out = self._run(argv, stdin, work)
            return self._reply(out, work)

    # -- per CLI -------------------------------------------------------------------------------
    def _argv(self, work: Path, system: str, prompt: str) -> tuple[list[str], str]:
        exe = self.executable
        if self.kind == "claude-cli":
            argv = [exe, "-p", "--output-format", "json", "--no-session-persistence", "--tools", "",
                    "--system-prompt", system]
            if self.schema is not None:
                argv += ["--json-schema", json.dumps(self.schema, separators=(",", ":"))]
            if self.model:
                argv += ["--model", self.model]
            return [*argv, *self.extra_args], prompt
        whole = f"{system}\n\n{prompt}"  # codex exec and gemini -p take no separate system prompt
        if self.kind == "codex-cli":
            argv = [exe, "exec", "--ephemeral", "--skip-git-repo-check", "--sandbox", "read-only",
                    "-C", str(work), "-o", str(work / "reply.txt")]
            if self.schema is not None:
                (work / "schema.json").write_text(json.dumps(self.schema), encoding="utf-8")
                argv += ["--output-schema", str(work / "schema.json")]
            if self.model:
                argv += ["-m", self.model]
            return [*argv, *self.extra_args, "-"], whole
        argv = [exe, "-p", "", "--output-format", "json", "--approval-mode", "plan", "--skip-trust"]
        if self.model:
            argv += ["-m", self.model]
        return [*argv, *self.extra_args], whole

    def _run(self, argv: list[str], stdin: str, work: Path) -> str:
        env = dict(self.env if self.env is not None else os.environ)
        env.setdefault("NO_COLOR", "1")
        try:
            done = subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=work, env=env,
                                  timeout=self.timeout, check=False,
                                  preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        except subprocess.TimeoutExpired:
            raise AgentCLIError("timeout", f"{self.kind} gave no answer in {self.timeout:.0f} s") from None
        except OSError as exc:
            raise AgentCLIError("not_runnable", str(exc)) from None
        if done.returncode != 0:
            raise AgentCLIError("failed", f"exit {done.returncode}: {_tail(done.stderr or done.stdout)}")
        return done.stdout

    def _reply(self, out: str, work: Path) -> str:
        if self.kind == "codex-cli":
            reply = work / "reply.txt"
            if not reply.is_file():
                raise AgentCLIError("no_reply", "codex wrote no last message")
            return reply.read_text(encoding="utf-8")
        start = out.find("{")  # some CLIs print a notice before their JSON, which may span lines
        try:
            data = json.loads(out[start:] if start >= 0 else out)
        except ValueError:
            raise AgentCLIError("unreadable", out[-300:]) from None
        if not isinstance(data, dict):
            raise AgentCLIError("unreadable", out[-300:])
        if self.kind == "claude-cli":
            if data.get("is_error"):
                raise AgentCLIError("failed", redact_then_cut(str(data.get("result") or data.get("subtype")), 300))
            self.last_usage = {"usage": data.get("usage"), "cost_usd": data.get("total_cost_usd")}
            structured = data.get("structured_output")
            if structured is not None:
                return json.dumps(structured)
            return str(data.get("result") or "")
        self.last_usage = {"stats": data.get("stats")}
        if data.get("error"):
            raise AgentCLIError("failed", redact_then_cut(json.dumps(data["error"]), 300))
        return str(data.get("response") or "")


def find_cli(kind: str, path: str = "") -> str | None:
    """The executable of an agent CLI: ``path`` when given and runnable, else the program on PATH."""
    if path:
        return path if Path(path).is_file() and os.access(path, os.X_OK) else None
    return shutil.which(AGENT_CLIS[kind][0]) if kind in AGENT_CLIS else None


def detected_clis() -> list[str]:
    """The settings values of the agent CLIs found on PATH (file stats only: call off the GUI thread)."""
    return [kind for kind in AGENT_CLIS if find_cli(kind)]


def _tail(text: str, limit: int = 300) -> str:
    """The end of a CLI's error output (where it says what went wrong), redacted before it is cut."""
    return redact_then_cut(text, len(text) + 64)[-limit:]
