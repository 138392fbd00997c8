"""What a session start knows besides the learned history: the prompt and the project's state.

Prefetch used to see only the typed prompt. A session start knows more, and most
of it names files outright:

* the typed prompt, and the text a slash command expands to (``/hi`` runs
  ``.claude/commands/hi.md``; Gemini CLI's ``.gemini/commands/*.toml``; Codex's
  ``~/.codex/prompts/*.md``), with ``$ARGUMENTS`` filled in; a command named later in
  the prompt ("Execute /hi") brings its file and text; files ``@``-attached in the
  prompt are read too, since the agent receives their text;
* the git working state: the branch, uncommitted files (staged, modified,
  untracked), and the files of the last few commits;
* the handoff and progress files the project keeps (``HANDOFF.md``,
  ``PROGRESS.md``, ``TODO*``, ``NEXT*``, ``docs/*progress*`` …) and the files they name.

Everything here reads the project folder and runs git with a short timeout; a
missing folder, no git, or an unreadable file simply contributes nothing.
"""

from __future__ import annotations

import logging
import re
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from desktop.memory.observer.tool_names import plausible_file

logger = logging.getLogger("engram.observer")

GIT_TIMEOUT_S: Final = 3.0
RECENT_COMMITS: Final = 5
MAX_FILE_CHARS: Final = 50_000
MAX_NAMED: Final = 40
#: Handoff/progress notes, matched case-insensitively on the file name (root and docs/).
HANDOFF_NAME: Final = re.compile(r"^(?:handoff|progress|todo|next[-_ ]?steps?|status|notes?|worklog|"
                                 r"session[-_ ]?notes?)(?:[-_.].*)?\.(?:md|txt|markdown|org|rst)$|^todo$", re.I)
DOCS_HANDOFF: Final = re.compile(r"(?:progress|handoff|todo|status|next[-_]?steps?|worklog)", re.I)
_COMMAND: Final = re.compile(r"^\s*/([\w][\w:.-]*)(?:\s+(.*))?$", re.S)
#: A command named inside a prompt ("Execute /hi and wait"): the agent will read and run its file.
COMMAND_REF: Final = re.compile(r"(?:^|(?<=\s))/([A-Za-z][\w:-]*)(?=$|[\s.,;:!?)])")
_ATTACHED: Final = re.compile(r"(?<![\w/])@([\w./-]+\.\w{1,10})")
#: A file named in prose: a path with a folder, or a name with an extension (``cli.py``, ``TODO.md``).
_NAMED: Final = re.compile(r"(?<![\w/@.-])@?((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z]\w{0,7})(?![\w/])")


@dataclass(frozen=True)
class StartContext:
    """Everything a session start knows that names files (all paths project-relative)."""

    prompt: str = ""
    expansion: str = ""
    """The slash command's expanded text and the text of files the prompt ``@``-attaches."""
    branch: str | None = None
    uncommitted: tuple[str, ...] = ()
    committed: tuple[str, ...] = ()
    """Files of the last few commits, newest first."""
    handoff: tuple[str, ...] = ()
    """Handoff/progress files present in the project."""
    handoff_named: tuple[str, ...] = ()
    """Files the handoff/progress files name."""

    def text(self) -> str:
        """The prompt as the agent receives it: typed text plus expansion."""
        return f"{self.prompt}\n{self.expansion}".strip()


def named_files(text: str) -> list[str]:
    """Path-like words of ``text`` (``@`` and ``./`` stripped), in order, without repeats."""
    out: dict[str, None] = {}
    for m in _NAMED.finditer(text):
        name = m.group(1).removeprefix("./").rstrip(".")
        if "/" not in name and len(name.split(".")[0]) < 2:
            continue  # "e.g", "i.e": abbreviations, not files
        if plausible_file(name) and not name[0].isdigit() and not name.startswith(".."):
            out.setdefault(name, None)
            if len(out) >= MAX_NAMED:
                break
    return list(out)


def _read(path: Path, root: Path) -> str:
    """A command file's text; nothing when it is a link out of ``root`` (a repository may point anywhere)."""
    try:
        real = path.resolve(strict=True)
        if real.is_relative_to(root.resolve()) and real.is_file() and real.stat().st_size <= MAX_FILE_CHARS * 4:
            return real.read_text(encoding="utf-8", errors="replace")[:MAX_FILE_CHARS]
    except (OSError, RuntimeError):
        pass
    return ""


def expand_command(prompt: str, project_dir: Path | None, home: Path | None = None) -> str:
    """The text a slash-command prompt expands to (empty when it is not one, or unknown)."""
    m = _COMMAND.match(prompt)
    if m is None:
        return ""
    name, args = m.group(1), (m.group(2) or "").strip()
    rel = name.replace(":", "/")
    roots = [r for r in (project_dir, home) if r is not None]
    for root in roots:
        text = _read(root / ".claude" / "commands" / f"{rel}.md", root)
        if text:
            return text.replace("$ARGUMENTS", args)
        toml = _read(root / ".gemini" / "commands" / f"{rel}.toml", root)
        if toml:
            try:
                body = str(tomllib.loads(toml).get("prompt", ""))
            except tomllib.TOMLDecodeError:
                continue
            return body.replace("{{args}}", args)
    if home is not None:
        text = _read(home / ".codex" / "prompts" / f"{rel}.md", home)
        if text:
            return text.replace("$ARGUMENTS", args)
    return ""


def command_file(name: str, project_dir: Path | None, home: Path | None = None) -> str | None:
    """Project-relative path of the project's command file for ``/name`` (None when there is none)."""
    rel = f".claude/commands/{name.replace(':', '/')}.md"
    return rel if project_dir is not None and (project_dir / rel).is_file() else None


def referenced_commands(prompt: str, project_dir: Path | None) -> str:
    """Command files a prompt refers to after its start ("Execute /hi"), each with its text."""
    out = []
    for name in dict.fromkeys(COMMAND_REF.findall(prompt[1:] if prompt.startswith("/") else prompt)):
        rel = command_file(name, project_dir)
        if rel is not None and project_dir is not None:
            out.append(f"{rel}\n{_read(project_dir / rel, project_dir)}")
    return "\n".join(out)


def attached_text(prompt: str, project_dir: Path | None) -> str:
    """The text of files the prompt ``@``-attaches (the agent receives them with the prompt)."""
    if project_dir is None:
        return ""
    root = project_dir.resolve()
    texts = []
    for name in dict.fromkeys(_ATTACHED.findall(prompt)):
        path = (root / name).resolve()
        if path.is_relative_to(root):  # "@../../somewhere" is not the project's to read
            texts.append(_read(path, root))
    return "\n".join(t for t in texts if t)


def _git(project_dir: Path, *commands: tuple[str, ...]) -> list[str | None]:
    """The stdout of each git command (None when it failed), the commands run side by side.

    A session start asks git three questions; running them at once costs the time of the
    slowest instead of the sum (each is a process start), which a hook answering before the
    agent's first step feels.
    """
    procs: list[subprocess.Popen[str] | None] = []
    for args in commands:
        try:
            procs.append(subprocess.Popen(["git", "-C", str(project_dir), *args], stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True))
        except OSError as exc:
            logger.debug("git %s failed in %s: %s", args[0], project_dir, exc)
            procs.append(None)
    out: list[str | None] = []
    for args, proc in zip(commands, procs, strict=True):
        if proc is None:
            out.append(None)
            continue
        try:
            stdout, _ = proc.communicate(timeout=GIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            logger.debug("git %s timed out in %s", args[0], project_dir)
            out.append(None)
            continue
        out.append(stdout if proc.returncode == 0 else None)
    return out


def git_state(project_dir: Path, commits: int = RECENT_COMMITS) -> tuple[str | None, list[str], list[str]]:
    """(branch, uncommitted files, files of the last ``commits`` commits newest first); empty outside git."""
    status, head, log_text = _git(project_dir, ("status", "--porcelain=v1", "-z", "--untracked-files=all"),
                                  ("rev-parse", "--abbrev-ref", "HEAD"),
                                  ("log", f"-{commits}", "--name-only", "--format=", "--no-renames"))
    if status is None:
        return None, [], []
    branch = (head or "").strip() or None
    uncommitted: dict[str, None] = {}
    entries = status.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if "R" in code or "C" in code:
            i += 1  # -z puts the rename's source in the next field
        if "D" not in code and not path.endswith("/"):
            uncommitted.setdefault(path, None)
    committed = list(dict.fromkeys(p for p in (log_text or "").splitlines() if p.strip()))
    if branch == "HEAD":
        branch = None  # detached
    return branch, list(uncommitted), committed


def handoff_files(project_dir: Path) -> list[str]:
    """Handoff/progress notes present in the project root or ``docs/`` (project-relative)."""
    out: list[str] = []
    try:
        for child in sorted(project_dir.iterdir()):
            if child.is_file() and HANDOFF_NAME.match(child.name):
                out.append(child.name)
        docs = project_dir / "docs"
        if docs.is_dir():
            for child in sorted(docs.iterdir()):
                if child.is_file() and child.suffix.lower() in (".md", ".txt") and DOCS_HANDOFF.search(child.stem):
                    out.append(f"docs/{child.name}")
    except OSError:
        return out
    return out


def start_context(prompt: str, project_dir: Path | None, *, home: Path | None = None) -> StartContext:
    """Gather what a session starting on ``prompt`` in ``project_dir`` knows (never raises)."""
    expansion = "\n".join(t for t in (expand_command(prompt, project_dir, home),
                                      referenced_commands(prompt, project_dir),
                                      attached_text(prompt, project_dir)) if t)
    if project_dir is None or not project_dir.is_dir():
        return StartContext(prompt, expansion)
    branch, uncommitted, committed = git_state(project_dir)
    notes = handoff_files(project_dir)
    named: dict[str, None] = {}
    for note in notes:
        for name in named_files(_read(project_dir / note, project_dir)):
            named.setdefault(name, None)
    return StartContext(prompt, expansion, branch, tuple(uncommitted), tuple(committed), tuple(notes),
                        tuple(named))
