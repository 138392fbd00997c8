"""Redaction on the way out: every export and every injection passes the scanner again.

Secrets are already kept out on the way in (memory_ops), but a scanner that
improves after a memory was stored, or text that reached the database another
way, must still not leave the machine. These helpers are cheap on clean text
(one scan, no copy) and idempotent on redacted text.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from desktop.memory.privacy.secrets import redact

log = logging.getLogger("engram.lifecycle")

# Record fields that hold free text (or JSON holding free text) in exports.
TEXT_FIELDS = ("content", "citation_text", "context_prefix", "methodology", "deprecated_reason", "external_id",
               "session_id", "commit_sha", "target_node_id")
JSON_FIELDS = ("tags", "provenance", "metadata", "work_unit_ref", "related_files", "related_modules", "relations",
               "code_anchors", "provenance_session_ids", "impacted_node_ids")


def redact_for_output(text: str) -> str:
    """`text` with every secret the scanner finds replaced by ``[REDACTED:<kind>]``."""
    if not text:
        return text
    out, found = redact(text)
    if found:
        log.info("redacted %d secret(s) on output", len(found))
    return out


def redact_value(value: Any) -> Any:
    """Redact strings anywhere inside a JSON-like value (keeps its structure)."""
    if isinstance(value, str):
        return redact_for_output(value)
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    return value


def redact_record(record: dict[str, Any]) -> dict[str, Any]:
    """An export record with its text fields redacted (the dict is changed in place and returned)."""
    for key in TEXT_FIELDS:
        if isinstance(record.get(key), str):
            record[key] = redact_for_output(record[key])
    for key in JSON_FIELDS:
        value = record.get(key)
        if value:
            # One scan of the dumped JSON is much cheaper than walking every string.
            dumped = json.dumps(value, ensure_ascii=False)
            if redact(dumped)[1]:
                record[key] = redact_value(value)
    return record
