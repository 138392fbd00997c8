"""Engram inside Claude Code, Codex and Gemini CLI: lifecycle hooks, their installer and the warm service."""
