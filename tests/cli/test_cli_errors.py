"""Every known core error reaches the user as one line, never a traceback (issue 17)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.cli import main as cli_main
from desktop.cli.errors import known_error_line
from desktop.memory.embedding.base import MODEL_MISSING, PROVIDER_UNREACHABLE, EmbeddingError
from desktop.memory.store.errors import CorruptDatabaseError


def test_embedding_errors_are_worded_with_their_code() -> None:
    line = known_error_line(EmbeddingError(MODEL_MISSING, "tokenizer not found:\n/x/tokenizer.json"))
    assert line is not None and "\n" not in line
    assert MODEL_MISSING in line and "/x/tokenizer.json" in line and "engram doctor" in line
    assert "cannot be reached" in (known_error_line(EmbeddingError(PROVIDER_UNREACHABLE)) or "")


def test_engram_errors_keep_their_hint_and_bugs_are_not_known() -> None:
    line = known_error_line(CorruptDatabaseError("/x/engram.db"))
    assert line is not None and "--move-aside" in line
    assert known_error_line(ValueError("a bug")) is None


def test_an_embedding_error_in_a_command_exits_2_with_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    def explode(_args: object) -> int:
        raise EmbeddingError(MODEL_MISSING, "tokenizer not found: /nowhere/tokenizer.json")

    parser = cli_main.build_parser()
    args = parser.parse_args(["list"])
    monkeypatch.setattr(cli_main, "parser_for", lambda _args: parser)
    monkeypatch.setattr(args, "func", explode, raising=False)
    monkeypatch.setattr(parser, "parse_args", lambda _argv=None: args)
    assert cli_main.main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("engram: ") and err.count("\n") == 1 and "Traceback" not in err


def test_list_on_a_damaged_database_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`engram list` opens without the whole-file check; a damaged page it reads is still one line."""
    from desktop.composition import Engram
    from desktop.memory.store.memory_ops import NewMemory
    from desktop.settings import Settings

    data, root = tmp_path / "data", tmp_path / "proj"
    root.mkdir()
    project = Engram(Settings(data_dir=data)).open_project(root, remember=False)
    project.memories.add_many([NewMemory(content=f"memory number {i} " + "x" * 200, type="note")
                               for i in range(300)]).result(60)
    db_path = project.info.db_path
    project.close()
    raw = bytearray(db_path.read_bytes())
    page = int.from_bytes(raw[16:18], "big") or 65536
    raw[page:] = b"\xa5" * (len(raw) - page)  # every page but the schema page
    db_path.write_bytes(bytes(raw))
    code = cli_main.main(["list", "--project", str(root), "--data-dir", str(data)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("engram: ") and err.count("\n") == 1 and "--move-aside" in err


def test_an_empty_query_is_one_line_and_stores_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, data = tmp_path / "proj", tmp_path / "data"
    root.mkdir()
    for query in ("", "   "):
        code = cli_main.main(["search", query, "--project", str(root), "--data-dir", str(data)])
        err = capsys.readouterr().err
        assert code == 1 and err == "engram: the query is empty: give some words or identifiers to look for\n"
    assert not data.exists() or not any(data.rglob("*.db"))
