"""Secret guards of the memory write ops: refuse what a person typed, redact what an agent derived.

The writer's GuardedConnection redacts every stored text anyway (privacy/boundary.py);
these run first so a person who typed a credential is told where it is instead of
finding it silently replaced.
"""

from __future__ import annotations

import json
from typing import Any

from desktop.memory.privacy.secrets import redact, scan
from desktop.memory.store.errors import SecretRefusedError, ValidationError


def check_text(value: str, what: str) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"{what} must be text.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(f"{what} is not valid UTF-8 text.") from exc
    return value


def _excerpt(text: str, start: int, end: int) -> str:
    """Where the first secret is, in its words around it, echoing nothing of it (nor of any other).

    The excerpt is cut from the redacted text: the secret and any other one nearby are
    markers, and no cut can leave a piece of one.
    """
    redacted, found = redact(text)
    first = next((f for f in found if f.start == start), None)
    if first is None:  # the caller's span is not a finding of the whole text: show none of it
        return "[REDACTED]"
    # Findings are sorted: before the first one the redacted text has the same offsets.
    marker = f"[REDACTED:{first.kind}]"
    return redacted[max(0, start - 20):start + len(marker) + 20]


def guard_text(text: str, *, user_taught: bool) -> str:
    """Refuse (user-taught) or redact (agent-derived) secrets in `text`."""
    if user_taught:
        found = scan(text)
        if found:
            f = found[0]
            raise SecretRefusedError(f.kind, f.start, f.end, _excerpt(text, f.start, f.end))
        return text
    return redact(text)[0]


def guard_json(value: Any, *, user_taught: bool) -> Any:
    if value is None:
        return None
    dumped = json.dumps(value, ensure_ascii=False)
    guarded = guard_text(dumped, user_taught=user_taught)
    return value if guarded == dumped else json.loads(guarded) if _is_json(guarded) else value


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


# Fields besides content/tags/citation a person can type (--file, --module, metadata...).
_OTHER_TEXT_FIELDS = ("related_files", "related_modules", "session_id", "commit_sha", "relations",
                      "work_unit_ref", "methodology", "context_prefix", "external_id", "code_anchors",
                      "metadata", "target_node_id", "impacted_node_ids")


def refuse_secret_fields(item: Any) -> None:
    """Refuse a user-taught memory whose other fields (files, metadata, ...) hold a secret."""
    for name in _OTHER_TEXT_FIELDS:
        value = getattr(item, name)
        if value in (None, "", [], {}):
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        found = scan(text)
        if found:
            f = found[0]
            raise SecretRefusedError(f.kind, f.start, f.end, f"{name}: " + _excerpt(text, f.start, f.end))


