"""Known storage errors.

Each carries a stable `code` the UI and CLI translate into words; anything that is
not an `EngramError` is a bug and is reported as one (the qutebrowser split).
"""

from __future__ import annotations

import errno


class EngramError(Exception):
    """A failure the user can understand and act on."""

    code = "engram_error"

    def __init__(self, message: str, *, detail: str | None = None, code: str | None = None) -> None:
        """``code`` overrides the class's code for families that carry it per instance (embedding)."""
        super().__init__(message)
        self.detail = detail
        if code is not None:
            self.code = code


class StoreError(EngramError):
    """Base class for database problems."""

    code = "store_error"


class CorruptDatabaseError(StoreError):
    """The file is not a healthy SQLite database. Never overwritten automatically."""

    code = "corrupt_database"

    def __init__(self, path: str, detail: str | None = None) -> None:
        super().__init__(f"The memory database {path} is damaged.", detail=detail)
        self.path = path


class NewerDatabaseError(StoreError):
    """The database was written by a newer Engram; refused, never modified."""

    code = "newer_database"

    def __init__(self, path: str, unknown: list[str]) -> None:
        super().__init__(
            f"The memory database {path} was written by a newer version of Engram "
            f"(unknown migrations: {', '.join(unknown)}). Update Engram to open it.")
        self.path = path
        self.unknown = unknown


class ReadOnlyLocationError(StoreError):
    """The data folder or database file cannot be written."""

    code = "read_only"


class DiskFullError(StoreError):
    """The disk filled up; the transaction was rolled back, nothing half-written."""

    code = "disk_full"


class DatabaseBusyError(StoreError):
    """Another process held the write lock for longer than the busy timeout."""

    code = "busy"


class ValidationError(EngramError):
    """Input rejected before it reached the database (size, encoding, type...)."""

    code = "invalid_input"


class SecretRefusedError(ValidationError):
    """A user-taught memory contains a credential; refused with the span shown."""

    code = "secret_refused"

    def __init__(self, kind: str, start: int, end: int, excerpt: str) -> None:
        # Where it starts and its words around it; nothing of the secret itself, not even its length.
        super().__init__(f"This text contains what looks like a secret ({kind}) at character {start}: {excerpt}")
        self.kind = kind
        self.start = start
        self.end = end
        self.excerpt = excerpt


class NotFoundError(EngramError):
    """The memory (or other record) does not exist."""

    code = "not_found"


class WriterClosedError(StoreError):
    """A write was submitted after the writer shut down."""

    code = "writer_closed"


def os_error(exc: OSError, where: object = "") -> Exception:
    """A file write's OSError as Engram's known error (a full disk, a read-only place), else as it is."""
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        return DiskFullError("The disk is full; the change was not saved.")
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return ReadOnlyLocationError(f"{where} cannot be written; the change was not saved.")
    return exc
