"""Text helpers: code-aware FTS5 terms, safe MATCH queries, LLM token estimates, file kinds.

Names are loaded on first use (PEP 562), so a hook that needs only ``file_kinds`` does not load the
tokenizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.memory.lazy import lazy_getattr

if TYPE_CHECKING:
    from desktop.memory.text.tokens import count_tokens, expand_code_terms, fts_match_query, split_identifier

_WHERE = {"count_tokens": "tokens", "expand_code_terms": "tokens", "fts_match_query": "tokens",
          "split_identifier": "tokens"}
__all__ = ["count_tokens", "expand_code_terms", "fts_match_query", "split_identifier"]
__getattr__ = lazy_getattr(__name__, _WHERE)
