"""How long texts of agent events are capped: the head and the verdict (the tail), redacted at each cut.

Apart from ``events`` (its seven event dataclasses take ~12 ms to import): a hook process
journals every tool call's output capped (issue 25), and needs none of them.
"""

from __future__ import annotations

from typing import Any, Final

#: Tool outputs, arguments and long texts are capped at this many characters. Some
#: agents log multi-megabyte command outputs; signal detectors need the gist (the
#: head) and the verdict (the tail, where errors and exit codes usually are).
OUTPUT_CAP: Final[int] = 20_000


#: How far past a cut the text is redacted before cutting: a secret that straddles the cut
#: (a database URL whose ``@`` lies past it, a PEM block) is still whole in this window.
CUT_MARGIN: Final[int] = 4096


def cap_text(text: str, limit: int = OUTPUT_CAP) -> str:
    """Return ``text`` unchanged if short, else its head and tail around a marker.

    The tail is kept because compilers, test runners and shells print their verdict
    last; a head-only cut would throw away exactly the error a detector looks for.
    Both parts are redacted before they are cut (with :data:`CUT_MARGIN` of the text
    beyond each cut), so a cut never leaves the half of a secret the scanner needs whole.
    """
    if len(text) <= limit:
        return text
    from desktop.memory.privacy.secrets import redact

    head = (limit * 3) // 4
    tail = limit - head
    dropped = len(text) - head - tail
    first = redact(text[:head + CUT_MARGIN])[0][:head]
    last = redact(text[-(tail + CUT_MARGIN):])[0][-tail:]
    return f"{first}\n[... {dropped} characters truncated by Engram ...]\n{last}"


def cap_args(args: dict[str, Any], limit: int = OUTPUT_CAP) -> dict[str, Any]:
    """Return a copy of tool arguments with every long string value capped.

    A ``Write`` call carries the whole file as an argument; keeping megabytes of it
    per event would blow the observer's memory budget for no detection value.
    """
    out: dict[str, Any] = {}
    for key, value in args.items():
        if isinstance(value, str):
            out[key] = cap_text(value, limit)
        elif isinstance(value, dict):
            out[key] = cap_args(value, limit)
        elif isinstance(value, list):
            out[key] = [cap_text(v, limit) if isinstance(v, str) else v for v in value]
        else:
            out[key] = value
    return out
