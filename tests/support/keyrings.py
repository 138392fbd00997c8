"""Keyring backends for tests: a RAM store, and the "no secure store" state of a headless box."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import keyring
import keyring.errors
from keyring.backend import KeyringBackend


class MemoryKeyring(KeyringBackend):
    """A keyring that keeps secrets in a dict: an OS key store without the OS."""

    priority = 10

    def __init__(self) -> None:
        """An empty store."""
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        """The secret, or None."""
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        """Keep the secret."""
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        """Forget the secret."""
        if self.store.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError("not found")


@contextmanager
def installed_keyring(backend: KeyringBackend) -> Iterator[KeyringBackend]:
    """Make ``backend`` the active keyring for the block, restoring the previous one after."""
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@contextmanager
def memory_keyring(**keys: str) -> Iterator[MemoryKeyring]:
    """A RAM keyring holding ``keys`` (provider name -> key) under Engram's service name."""
    from desktop.memory.secrets_store import set_api_key

    backend = MemoryKeyring()
    with installed_keyring(backend):
        for service, key in keys.items():
            set_api_key(service, key)
        yield backend


@contextmanager
def fail_keyring() -> Iterator[KeyringBackend]:
    """keyring's ``fail`` backend: a machine with no secure store."""
    from keyring.backends import fail

    with installed_keyring(fail.Keyring()) as backend:
        yield backend
