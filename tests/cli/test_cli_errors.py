"""Every known core error reaches the user as one line, never a traceback (issue 17)."""

from __future__ import annotations

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
    monkeypatch.setattr(cli_main, "build_parser", lambda: parser)
    monkeypatch.setattr(args, "func", explode, raising=False)
    monkeypatch.setattr(parser, "parse_args", lambda _argv=None: args)
    assert cli_main.main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("engram: ") and err.count("\n") == 1 and "Traceback" not in err
