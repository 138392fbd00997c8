"""Lessons that carry their own triggers, and what happened after each warning (issue 25)."""
