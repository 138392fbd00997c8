"""QT_TRANSLATE_NOOP with the type it really has.

PySide6's QT_TRANSLATE_NOOP returns its `message` argument unchanged, but its stub
declares `-> object`, so every table of marked words would type as dict[str, object]
and every QCoreApplication.translate() of one of them would fail type checking.
This stand-in keeps the name (lupdate extracts calls by name, whatever module they
come from) and says what it returns: the source string, untranslated.
"""

from __future__ import annotations


def QT_TRANSLATE_NOOP(context: str, message: str) -> str:
    """Mark `message` for lupdate in `context`; return it as is (translate it at display time)."""
    return message
