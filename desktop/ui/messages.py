"""Words for the core's error codes: the core returns codes, the UI words them."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from desktop.memory.store.errors import EngramError


def describe_error(exc: BaseException) -> str:
    """A sentence a person can act on, in the current language."""
    code = getattr(exc, "code", None)
    words = {
        "corrupt_database": QCoreApplication.translate(
            "Messages", "The memory database of this project is damaged. Engram did not change it."
        ),
        "newer_database": QCoreApplication.translate(
            "Messages",
            "This project's memory was saved by a newer version of Engram. "
            "Update Engram to open it; nothing was changed.",
        ),
        "read_only": QCoreApplication.translate(
            "Messages",
            "Engram cannot write to its data folder. Check its permissions or choose "
            "another data location in Settings.",
        ),
        "disk_full": QCoreApplication.translate(
            "Messages", "The disk is full. The last change was not saved; everything saved before is safe."
        ),
        "busy": QCoreApplication.translate("Messages", "Another Engram window kept the memory busy. Please try again."),
        "secret_refused": QCoreApplication.translate(
            "Messages", "This text contains what looks like a secret, so it was not saved:"
        ),
        "not_found": QCoreApplication.translate("Messages", "That memory no longer exists."),
        "invalid_input": QCoreApplication.translate("Messages", "This input was not accepted:"),
        "writer_closed": QCoreApplication.translate("Messages", "The project is closing; the change was not saved."),
    }
    if code in words:
        text = words[code]
        if code in ("secret_refused", "invalid_input"):
            text += " " + str(exc)
        return text
    if isinstance(exc, EngramError):
        return str(exc)
    return QCoreApplication.translate("Messages", "Something went wrong inside Engram (a bug): %1").replace(
        "%1", f"{type(exc).__name__}: {exc}"
    )
