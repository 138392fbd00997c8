"""API keys in the operating system's secure store (Keychain, Credential Manager, Secret Service).

Keys are stored with the ``keyring`` package under the service name ``"engram"``
and the provider's name as the username (``"openai"``, ...). They are never
written to a plain file: when the only backend ``keyring`` can find is the
``fail``/``null`` placeholder or a plain-text file backend, every call raises
:class:`KeyringUnavailable` (code ``no_secure_store``) and the UI explains that
no secure store exists instead of silently saving the key in the clear.
"""

from __future__ import annotations

import logging
from typing import Final

import keyring
import keyring.errors
from keyring.backend import KeyringBackend

from desktop.memory.store.errors import EngramError

__all__ = [
    "KEYRING_SERVICE",
    "NO_SECURE_STORE",
    "SECURE_STORE_FAILED",
    "KeyringUnavailable",
    "SecretStoreError",
    "delete_api_key",
    "get_api_key",
    "keyring_available",
    "set_api_key",
]

logger = logging.getLogger("engram.secrets")

KEYRING_SERVICE: Final = "engram"
NO_SECURE_STORE: Final = "no_secure_store"
SECURE_STORE_FAILED: Final = "secure_store_failed"

# Backends that do not keep a secret safely: the placeholders keyring falls back
# to when nothing else works, and keyrings.alt's plain-text file (matched by
# name because keyrings.alt is an optional third-party package).
_INSECURE_BACKENDS: Final = frozenset(
    {
        "keyring.backends.fail.Keyring",
        "keyring.backends.null.Keyring",
        "keyrings.alt.file.PlaintextKeyring",
        "keyrings.alt.file.EncryptedKeyring",
    }
)


class SecretStoreError(EngramError):
    """The secure store failed (locked, denied, crashed); ``code`` is stable (an EngramError)."""

    def __init__(self, message: str, code: str = SECURE_STORE_FAILED) -> None:
        """Create an error with a stable ``code`` for the UI to word."""
        super().__init__(message, code=code)


class KeyringUnavailable(SecretStoreError):
    """No secure credential store exists on this machine (code ``no_secure_store``)."""

    def __init__(self, message: str = "") -> None:
        """Create the error; the default message names the fix."""
        super().__init__(
            message
            or "No secure credential store is available (install/unlock the system keychain, "
            "e.g. GNOME Keyring or KWallet on Linux); API keys are never saved to a plain file.",
            NO_SECURE_STORE,
        )


def _backend_name(backend: KeyringBackend) -> str:
    """Return the dotted class name used to recognise insecure backends."""
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def _is_secure(backend: KeyringBackend) -> bool:
    """Return whether ``backend`` (or, for a chainer, any of its members) is a real store."""
    members = getattr(backend, "backends", None)
    if isinstance(members, (list, tuple)):
        # The chainer delegates to its members: it is as good as its best one.
        return any(_is_secure(member) for member in members)
    return _backend_name(backend) not in _INSECURE_BACKENDS


def _secure_backend() -> KeyringBackend:
    """Return the active keyring backend, or raise :class:`KeyringUnavailable`."""
    try:
        backend = keyring.get_keyring()
    except Exception as exc:  # backend discovery imports platform modules that may fail
        raise KeyringUnavailable(f"cannot load the credential store: {exc}") from None
    if not _is_secure(backend):
        raise KeyringUnavailable()
    return backend


def _check_service(service: str) -> str:
    """Validate a provider name used as the keyring username."""
    name = service.strip()
    if not name:
        raise ValueError("service (provider name) must not be empty")
    return name


def keyring_available() -> bool:
    """Return whether a secure credential store can hold API keys; never raises."""
    try:
        _secure_backend()
    except SecretStoreError:
        return False
    return True


def get_api_key(service: str) -> str | None:
    """Return the API key stored for provider ``service``, or None if none is stored.

    Raises :class:`KeyringUnavailable` when there is no secure store and
    :class:`SecretStoreError` when the store refuses (e.g. it is locked).
    """
    name = _check_service(service)
    backend = _secure_backend()
    try:
        key = backend.get_password(KEYRING_SERVICE, name)
    except keyring.errors.KeyringError as exc:
        raise SecretStoreError(f"cannot read the API key for {name}: {exc}") from None
    # An empty entry is as good as none: callers test `if key`.
    return key or None


def set_api_key(service: str, key: str) -> None:
    """Store ``key`` as the API key of provider ``service`` in the secure store.

    Surrounding whitespace (a common copy-paste accident) is stripped; an empty
    key is rejected, use :func:`delete_api_key` to remove one.
    """
    name = _check_service(service)
    value = key.strip()
    if not value:
        raise ValueError("API key must not be empty; use delete_api_key() to remove it")
    backend = _secure_backend()
    try:
        backend.set_password(KEYRING_SERVICE, name, value)
    except keyring.errors.KeyringError as exc:
        raise SecretStoreError(f"cannot save the API key for {name}: {exc}") from None
    # Log the fact, never the key.
    logger.info("stored API key for %s in %s", name, _backend_name(backend))


def delete_api_key(service: str) -> bool:
    """Remove the API key of provider ``service``; return whether one was stored."""
    name = _check_service(service)
    backend = _secure_backend()
    try:
        backend.delete_password(KEYRING_SERVICE, name)
    except keyring.errors.PasswordDeleteError:
        return False
    except keyring.errors.KeyringError as exc:
        raise SecretStoreError(f"cannot delete the API key for {name}: {exc}") from None
    logger.info("deleted API key for %s", name)
    return True
