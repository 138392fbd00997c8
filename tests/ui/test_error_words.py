"""One error hierarchy, one code per condition, every code worded in the UI and the CLI."""

from __future__ import annotations

import importlib
import pkgutil

import desktop.agents
import desktop.memory
from desktop.cli.main import main
from desktop.cli.words import WORDS
from desktop.memory import secrets_store
from desktop.memory.embedding.base import EMBEDDING_CODES, EmbeddingError
from desktop.memory.store.errors import EngramError
from desktop.ui.messages import describe_error, error_words


def _all_codes() -> set[str]:
    for pkg in (desktop.memory, desktop.agents):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if info.name != "desktop.agents.mcp_server":  # its SDK import is heavy; no codes of its own
                importlib.import_module(info.name)
    codes: set[str] = set()
    todo = [EngramError]
    while todo:
        cls = todo.pop()
        codes.add(cls.code)
        todo += cls.__subclasses__()
    return codes | set(EMBEDDING_CODES) | {secrets_store.NO_SECURE_STORE, secrets_store.SECURE_STORE_FAILED}


def test_every_code_is_worded_in_ui_and_cli() -> None:
    codes = _all_codes()
    assert {"provider_unreachable", "missing_api_key", "model_not_found"} <= codes
    assert not {"provider_unavailable", "no_api_key", "model_missing"} & codes  # one code per condition
    assert codes - set(WORDS) == set()
    assert codes - set(error_words()) == set()


def test_embedding_and_keyring_errors_are_engram_errors() -> None:
    err = EmbeddingError("provider_unreachable", "ollama at :11434 refused")
    assert isinstance(err, EngramError) and err.code == "provider_unreachable"
    assert isinstance(secrets_store.KeyringUnavailable(), EngramError)
    assert "did not answer" in describe_error(err)



def test_cli_words_a_known_error(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "p").mkdir()
    code = main(["get", "--project", str(tmp_path / "p"), "--data-dir", str(tmp_path / "d"), "999999"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("engram: That memory does not exist.")
