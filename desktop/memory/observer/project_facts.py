"""Project facts a command's outcome shows: what must be set, and that there is no Docker.

A developer tells a new colleague "X must be set (ask for the value)" and "there is no Docker
here". The sessions show both in command outcomes, with no one having to say them:

* a required variable: a failure that names an unset environment variable; the fact is
  that it must be set, never its value (values never reach the observer's text: names
  are read from error messages, and every text is redacted before it is stored);
* Docker missing: ``docker: command not found``, or no daemon to talk to.

Docker's absence read from one output may be incidental (a one-off shell), so it needs a second
session before it is stored; "X must be set" is stored at once.

What an agent reads again in one step is not stored: the toolchain a manifest pins (``go.mod``'s
``go`` line, ``engines.node``), the repository a ``git remote`` prints, the shell a "command not
found" shows. Stored from command outcomes and manifests, such facts were judged weak or noise by
every blind judge on all three dev projects (0 useful of 28 labels over the rounds: 18 weak, 10
noise; "an agent sees it in one step"), and no hook volunteers them
(``triggers/warn.read_from_environment``). What the user states about the repository, the shell,
hosts or versions is kept (``prose_lessons``).
"""

from __future__ import annotations

import re
from typing import Any, Final

from desktop.memory.observer.events import ToolResult
from desktop.memory.observer.scratchpad import Scratchpad
from desktop.memory.observer.signals import PROJECT_FACT, Signal
from desktop.memory.privacy.secrets import redact

_UNSET: Final = re.compile(
    r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]{3,})\b(?: environment variable| env var)?(?: is)? (?:not set|must be set|"
    r"is required|required but not set|is missing|is empty|is undefined|not defined)\b|"
    r"(?:missing|required|set the|please set|no) (?:required )?(?:environment variable|env var|variable)s?:? "
    r"[`'\"]?([A-Z][A-Z0-9_]{2,})\b|os\.environ\[['\"]([A-Z][A-Z0-9_]{2,})['\"]\]\s*\n?KeyError|"
    r"KeyError: ['\"]([A-Z][A-Z0-9]*_[A-Z0-9_]+)['\"]")
#: Upper-case words an "is not set" sentence uses that are not variables.
_NOT_VARIABLES: Final = frozenset({"HEAD", "PATH", "HOME", "USER", "SHELL", "PWD", "TERM", "LANG", "TMPDIR", "ERROR",
                                   "WARNING", "FAIL", "NOTE", "TODO", "JSON", "YAML", "HTTP", "HTTPS", "URL", "API",
                                   "CLI", "GIT", "SSH"})
_NO_DOCKER: Final = re.compile(r"docker: command not found|command not found: docker|Cannot connect to the Docker "
                               r"daemon|docker daemon is not running", re.I)


def _fact(sp: Scratchpad, fact: str, value: str, text: str, event: str, step: int, *,
          required: bool = False, min_sessions: int = 2, subject: str | None = "") -> None:
    """One fact signal. ``subject``: None when several facts of the kind hold at once (required
    variables); otherwise the fact has one value at a time, and a newer one supersedes the older."""
    clean, _ = redact(text)
    data: dict[str, Any] = {"text": clean, "fact": fact, "value": value, "source": "command", "required": required,
                            "min_sessions": min_sessions, "events": [event]}
    if subject is not None:
        data["purpose"] = f"{fact}:{subject}" if subject else fact
    sp.add_signal(Signal(PROJECT_FACT, f"{PROJECT_FACT}:{fact}:{value}", step, [], data, [clean]))


def on_command(sp: Scratchpad, ev: ToolResult, pend: dict[str, Any]) -> None:
    """Facts a shell command's outcome shows (bounded: the head and tail of the output only)."""
    command = str(pend.get("command", "")).strip()
    if not command:
        return
    if not ev.is_error:
        return
    event = str(pend.get("event", ev.event_key))
    output = ev.output[:4000] + "\n" + ev.output[-4000:] if len(ev.output) > 8000 else ev.output
    last = re.split(r"&&|;|\|\|", command)[-1].strip()
    if _NO_DOCKER.search(output[:2000]):
        _fact(sp, "docker", "absent", "Docker is not available here: `docker` is not installed or its daemon is "
                                      "not running, so services do not run in containers locally.", event, ev.step)
    for m in _UNSET.finditer(output[-4000:]):
        name = next(g for g in m.groups() if g)
        if name in _NOT_VARIABLES or len(name) > 60:
            continue
        _fact(sp, "env", name, f"The environment variable `{name}` must be set for `{_program(last)}` to work "
                               f"(ask the user for its value; it is not stored).", event, ev.step, required=True,
              min_sessions=1, subject=None)
        break


def _program(command: str) -> str:
    """The program a command runs (``go test``, ``npm run dev``), for the fact's wording."""
    words = [w for w in command.split() if "=" not in w][:3]
    return " ".join(words[:2]) if words else command[:40]

