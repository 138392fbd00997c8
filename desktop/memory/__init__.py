"""Engram core: memory store, retrieval, graph, observer (plain Python, no Qt)."""
