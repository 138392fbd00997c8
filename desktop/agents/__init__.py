"""Engram agent runtime (plain Python, no Qt)."""
