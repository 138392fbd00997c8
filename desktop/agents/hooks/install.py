"""``engram hooks install|uninstall|status``: Engram's entries in each agent's hook settings.

Files (project scope / user scope):

* Claude Code: ``.claude/settings.local.json`` / ``~/.claude/settings.json`` (the local
  file because the command holds this machine's path to ``engram``);
* Codex: ``.codex/hooks.json`` / ``~/.codex/hooks.json`` (hooks are on by default since
  Codex 0.124, under the ``[features].hooks`` key; ``codex_hooks`` is its deprecated alias,
  which Engram once added and now takes out again; a user's explicit ``false`` is reported);
* Gemini CLI: ``.gemini/settings.json`` / ``~/.gemini/settings.json``.

Installing merges: the user's keys, hooks and their order stay as they are, and
Engram's entries are appended (or updated in place when the command changed).
Installing twice changes nothing. Uninstalling removes exactly Engram's entries
(and containers that only held them), and the folder when Engram's file was all it held.
An unreadable settings file is never overwritten: the command fails with a message.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.agents.hooks.protocol import (
    AFTER_TOOL,
    AGENTS,
    BEFORE_TOOL,
    NATIVE_EVENTS,
    SESSION_END,
    STOP,
    TOOL_EVENTS,
    TOOL_FAILED,
)
from desktop.memory.store.errors import ValidationError

OURS = re.compile(r"(?:engram\S*|desktop\.cli\.main|--cli)\s+hook\s+[\w-]+\s+--agent\s")  # engram_hook.py too
# What an older Engram added to Codex's config.toml (hooks were behind this flag before Codex 0.124).
LEGACY_FEATURE_LINE = "codex_hooks = true  # added by engram hooks install"
LEGACY_FEATURES_HEADER = "[features]  # added by engram hooks install"
#: Seconds each agent lets a hook run before killing it (above the handler's own budget).
TIMEOUTS = {"session-start": 10, "prompt": 10, BEFORE_TOOL: 5, AFTER_TOOL: 10, TOOL_FAILED: 10, STOP: 30,
            SESSION_END: 60}
TOOL_MATCHER = {"claude-code": "*", "codex": "", "gemini": ".*"}


@dataclass
class HookStatus:
    """What is installed for one agent in one scope."""

    agent: str
    scope: str
    path: str
    events: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    feature: str = ""  # codex: on | off (the user turned hooks off) | legacy (a deprecated flag Engram added)

    @property
    def installed(self) -> bool:
        """True when every event of the agent has Engram's entry."""
        return len(self.events) == len(NATIVE_EVENTS[self.agent])


def settings_path(agent: str, scope: str, project: Path, home: Path) -> Path:
    """The hook settings file of ``agent`` for ``scope`` ("project" or "user")."""
    base = project if scope == "project" else home
    return {"claude-code": base / ".claude" / ("settings.local.json" if scope == "project" else "settings.json"),
            "codex": base / ".codex" / "hooks.json",
            "gemini": base / ".gemini" / "settings.json"}[agent]


def hook_command(agent: str, event: str, data_dir: Path | None) -> str:
    """The shell command of one hook entry, by this installation's absolute entry point.

    Agents run hooks in the repository they work in, so the command must not let that folder
    choose the code (no ``python -m`` with the working folder on ``sys.path``, no ``engram``
    found through a relative ``PATH`` entry): see desktop/agents/launch.py.
    """
    import shlex

    from desktop.agents.launch import hook_argv

    base = hook_argv()
    # The agent runs hooks from its own folder: a data folder given relative to where this was
    # installed must not become another, empty one there.
    where = ["--data-dir", str(Path(data_dir).expanduser().resolve())] if data_dir else []
    tail = ["hook", event, "--agent", agent, *where]
    return " ".join(shlex.quote(p) for p in base + tail)


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError) as exc:
        raise ValidationError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed.") from None
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
        raise ValidationError(f"{path} does not hold a JSON object with a \"hooks\" object; nothing was changed.")
    return data


def _save(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:  # mkstemp makes 0600; a new settings file gets the user's usual mode
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _entry(agent: str, event: str, data_dir: Path | None) -> dict[str, Any]:
    timeout = TIMEOUTS[event] * (1000 if agent == "gemini" else 1)
    entry: dict[str, Any] = {"type": "command", "command": hook_command(agent, event, data_dir), "timeout": timeout}
    if agent == "gemini":
        entry = {"name": f"engram-{event}", **entry}
    return entry


def _group(agent: str, event: str, data_dir: Path | None) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [_entry(agent, event, data_dir)]}
    matcher = TOOL_MATCHER[agent] if event in TOOL_EVENTS else ""
    return {"matcher": matcher, **group} if matcher else group


def merge(agent: str, data: dict[str, Any], data_dir: Path | None) -> dict[str, Any]:
    """``data`` with Engram's entries present and current (a new dict; input untouched)."""
    out = json.loads(json.dumps(data))
    hooks = out.setdefault("hooks", {})
    for event, native in NATIVE_EVENTS[agent].items():
        wanted = _entry(agent, event, data_dir)
        groups = hooks.setdefault(native, [])
        if not isinstance(groups, list):
            raise ValidationError(f"hooks.{native} is not a list; nothing was changed.")
        mine = [h for g in groups if isinstance(g, dict) for h in g.get("hooks") or []
                if isinstance(h, dict) and OURS.search(str(h.get("command", "")))]
        if not mine:
            groups.append(_group(agent, event, data_dir))
            continue
        for h in mine:  # update in place: a moved engram or a new data folder
            h.update({k: v for k, v in wanted.items() if k in ("command", "timeout", "name")})
    return out


def strip(agent: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without Engram's entries (and without containers only they filled)."""
    out = json.loads(json.dumps(data))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for native in list(hooks):
        groups = hooks[native]
        if not isinstance(groups, list):
            continue
        kept = []
        for g in groups:
            if not isinstance(g, dict) or not isinstance(g.get("hooks"), list):
                kept.append(g)
                continue
            mine = [h for h in g["hooks"] if isinstance(h, dict) and OURS.search(str(h.get("command", "")))]
            if not mine:
                kept.append(g)
            elif len(mine) < len(g["hooks"]):
                g["hooks"] = [h for h in g["hooks"] if h not in mine]
                kept.append(g)
        if kept or not groups:
            hooks[native] = kept
        else:
            del hooks[native]
    if not hooks and "hooks" in data and data["hooks"]:
        del out["hooks"]
    return out


def _features_path(path: Path) -> Path:
    return path.parent / "config.toml"


def codex_feature(path: Path) -> str:
    """Codex's hooks switch in the ``config.toml`` next to ``path``: on (the default), off (the
    user turned hooks off) or legacy (the deprecated ``codex_hooks`` line an older Engram added)."""
    toml = _features_path(path)
    if not toml.exists():
        return "on"
    text = toml.read_text(encoding="utf-8")
    if LEGACY_FEATURE_LINE in text:
        return "legacy"
    try:
        features = tomllib.loads(text).get("features", {})
    except tomllib.TOMLDecodeError:
        return "on"
    return "off" if False in (features.get("hooks"), features.get("codex_hooks")) else "on"


def _drop_legacy_codex_feature(path: Path) -> None:
    """Take out the deprecated ``codex_hooks = true`` an older Engram added (and its section if Engram's)."""
    toml = _features_path(path)
    if not toml.exists():
        return
    text = toml.read_text(encoding="utf-8")
    if LEGACY_FEATURE_LINE not in text:
        return
    new = text.replace(LEGACY_FEATURE_LINE + "\n", "").replace(LEGACY_FEATURE_LINE, "")
    if LEGACY_FEATURES_HEADER in new:  # the section was Engram's: it goes too (with the blank line before it)
        new = re.sub(r"\n*" + re.escape(LEGACY_FEATURES_HEADER) + r"\n?", "\n", new)
        new = new.lstrip("\n") if new.strip() else ""
    if not new.strip():
        toml.unlink()
    else:
        _save(toml, new)


def install(agent: str, scope: str, project: Path, home: Path, data_dir: Path | None = None) -> tuple[Path, bool]:
    """Merge Engram's hooks into the agent's settings; returns (file, changed)."""
    path = settings_path(agent, scope, project, home)
    old = _load(path)
    new = merge(agent, old, data_dir)
    changed = new != old or not path.exists()
    if changed:
        _save(path, _dump(new))
    if agent == "codex":
        _drop_legacy_codex_feature(path)
    return path, changed


def uninstall(agent: str, scope: str, project: Path, home: Path) -> tuple[Path, bool]:
    """Remove Engram's hooks; returns (file, changed). A file left as ``{}`` is deleted."""
    path = settings_path(agent, scope, project, home)
    if agent == "codex":
        _drop_legacy_codex_feature(path)
    if not path.exists():
        return path, False
    old = _load(path)
    new = strip(agent, old)
    if new == old:
        return path, False
    if new:
        _save(path, _dump(new))
    else:
        path.unlink()
        _remove_if_empty(path.parent)
    return path, True


def _remove_if_empty(folder: Path) -> None:
    """The agent's folder Engram's file was alone in (``.claude/``, ...) goes with it."""
    try:
        folder.rmdir()
    except OSError:  # not empty (the user's own files), or already gone
        pass


def status(agent: str, scope: str, project: Path, home: Path, data_dir: Path | None = None) -> HookStatus:
    """Which of Engram's events are installed, and which have an out-of-date command."""
    path = settings_path(agent, scope, project, home)
    st = HookStatus(agent, scope, str(path))
    try:
        data = _load(path)
    except ValidationError:
        return st
    hooks = data.get("hooks") or {}
    for event, native in NATIVE_EVENTS[agent].items():
        cmds = [str(h.get("command", "")) for g in hooks.get(native) or [] if isinstance(g, dict)
                for h in g.get("hooks") or [] if isinstance(h, dict)]
        mine = [c for c in cmds if OURS.search(c)]
        if mine:
            st.events.append(event)
            if hook_command(agent, event, data_dir) not in mine:
                st.stale.append(event)
    if agent == "codex":
        st.feature = codex_feature(path)
    return st


def detected_agents() -> list[str]:
    """Agents whose CLI is on PATH (the onboarding and settings offer hooks for these)."""
    exes = {"claude-code": "claude", "codex": "codex", "gemini": "gemini"}
    return [a for a in AGENTS if shutil.which(exes[a])]
