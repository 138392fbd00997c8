"""Text helpers: code-aware FTS5 terms, safe MATCH queries, LLM token estimates."""

from desktop.memory.text.tokens import count_tokens, expand_code_terms, fts_match_query, split_identifier

__all__ = ["count_tokens", "expand_code_terms", "fts_match_query", "split_identifier"]
