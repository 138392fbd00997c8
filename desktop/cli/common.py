"""Shared plumbing of the `engram` command: options, output, errors."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from desktop.composition import Engram
from desktop.memory.project import Project
from desktop.memory.store.connection import translate_error
from desktop.memory.types import Memory


class CliError(Exception):
    """A failure reported as one line on stderr with a non-zero exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = code


SQL_INT_MAX = 2**63 - 1
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def sql_int(text: str) -> int:
    """An argparse type: a whole number SQLite can hold (0 to 2^63-1), else a one-line error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number") from None
    if not 0 <= value <= SQL_INT_MAX:
        raise argparse.ArgumentTypeError(f"{text[:40]} is out of range (0 to {SQL_INT_MAX})")
    return value


def terminal_safe(text: str) -> str:
    """``text`` with control characters (ANSI escapes, bells, bidi overrides) shown as ``\\xNN``.

    Memories come from agents and shared files: printing their bytes raw would let one
    recolour, hide or rewrite what the terminal shows. Newlines and tabs stay.
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def add_common(parser: argparse.ArgumentParser) -> None:
    """Options every subcommand takes."""
    parser.add_argument("--project", type=Path, default=None,
                        help="project folder (default: the current directory)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="where Engram keeps its databases (default: the user-data folder)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def engram_from(args: argparse.Namespace) -> Engram:
    """The composition root for the ``--data-dir`` given (the user's settings, read once)."""
    return Engram.for_data_dir(args.data_dir)


@contextmanager
def open_project(args: argparse.Namespace, *, read_only: bool = False) -> Iterator[Project]:
    """Open the project named by --project (or the current directory) and close it afterwards.

    ``read_only`` (commands that only read, like ``list``): no whole-file integrity check at
    open (it reads every page, ~100 ms at 10,000 memories) and no memory upkeep; a damaged
    page the command reads still ends in the one-line "corrupt database" message.
    """
    app = engram_from(args)
    project = app.open_project(args.project or Path.cwd(), remember=False, maintain=not read_only,
                               check=not read_only)
    try:
        yield project
    except apsw.Error as exc:
        known = translate_error(exc, str(project.info.db_path))
        if known is exc:
            raise
        raise known from exc
    finally:
        project.close()


def emit(args: argparse.Namespace, data: Any, human: Callable[[], str] | str) -> None:
    """Print JSON with --json, otherwise the human-readable text."""
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    else:
        text = human() if callable(human) else human
        if text:
            text = terminal_safe(text)
            sys.stdout.write(text + ("" if text.endswith("\n") else "\n"))


def memory_json(m: Memory, **extra: Any) -> dict[str, Any]:
    """The compact JSON view of a memory in command output (external_id always echoed)."""
    data = {"id": m.id, "external_id": m.external_id, "type": m.type, "content": m.content,
            "confidence": round(m.confidence, 4), "scope": m.scope, "source": m.source,
            "status": m.status.value, "pinned": m.pinned, "tags": m.tags,
            "related_files": m.related_files, "created_at": m.created_at}
    data.update(extra)
    return data


def memory_line(m: Memory) -> str:
    """One line of human output."""
    flags = ("📌" if m.pinned else "") + ("" if m.status.value == "active" else f" [{m.status.value}]")
    text = " ".join(m.content.split())
    if len(text) > 100:
        text = text[:99] + "…"
    return f"#{m.id:<6} {m.type:<16} {text}{flags}"
