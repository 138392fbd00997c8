"""API keys in the OS keyring: stored when a secure backend exists, refused otherwise."""

from __future__ import annotations

import keyring
import keyring.errors
import pytest
from keyring.backends import chainer, null

from desktop.memory import secrets_store
from desktop.memory.secrets_store import KeyringUnavailable, SecretStoreError
from tests.support.keyrings import MemoryKeyring


def test_round_trip_in_a_secure_backend(memory_keyring: MemoryKeyring) -> None:
    assert secrets_store.keyring_available()
    assert secrets_store.get_api_key("openai") is None
    secrets_store.set_api_key("openai", "  sk-abc  \n")
    assert memory_keyring.store == {("engram", "openai"): "sk-abc"}
    assert secrets_store.get_api_key("openai") == "sk-abc"
    assert secrets_store.get_api_key("anthropic") is None
    assert secrets_store.delete_api_key("openai") is True
    assert secrets_store.delete_api_key("openai") is False
    assert secrets_store.get_api_key("openai") is None


def test_empty_key_and_service_are_rejected(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(ValueError):
        secrets_store.set_api_key("openai", "   ")
    with pytest.raises(ValueError):
        secrets_store.get_api_key(" ")
    assert memory_keyring.store == {}


def test_fail_backend_means_no_secure_store(fail_keyring: None) -> None:
    assert secrets_store.keyring_available() is False
    for call in (
        lambda: secrets_store.get_api_key("openai"),
        lambda: secrets_store.set_api_key("openai", "sk-abc"),
        lambda: secrets_store.delete_api_key("openai"),
    ):
        with pytest.raises(KeyringUnavailable) as info:
            call()
        assert info.value.code == "no_secure_store"
        assert "plain file" in str(info.value)


def test_null_backend_and_empty_chainer_are_refused() -> None:
    previous = keyring.get_keyring()
    try:
        keyring.set_keyring(null.Keyring())
        assert not secrets_store.keyring_available()

        # `backends` is a class property discovered from the environment; fix it per class.
        class NullChain(chainer.ChainerBackend):
            backends = (null.Keyring(),)

        class EmptyChain(chainer.ChainerBackend):
            backends = ()

        class GoodChain(chainer.ChainerBackend):
            backends = (null.Keyring(), MemoryKeyring())

        for chain, secure in ((NullChain(), False), (EmptyChain(), False), (GoodChain(), True)):
            keyring.set_keyring(chain)
            assert secrets_store.keyring_available() is secure, type(chain).__name__
    finally:
        keyring.set_keyring(previous)


def test_backend_failure_has_a_code(memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch) -> None:
    def locked(service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("collection is locked")

    monkeypatch.setattr(memory_keyring, "get_password", locked)
    with pytest.raises(SecretStoreError) as info:
        secrets_store.get_api_key("openai")
    assert info.value.code == "secure_store_failed"
    assert not isinstance(info.value, KeyringUnavailable)
