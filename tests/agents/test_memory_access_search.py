"""Agents get the full hybrid search, not only keywords, without any setup."""

from __future__ import annotations

from pathlib import Path

from desktop.agents.memory_access import StoreMemoryAccess
from desktop.composition import Engram
from desktop.settings import Settings


def test_agent_search_builds_the_hybrid_facade_and_finds_paraphrases(tmp_path: Path) -> None:
    project_dir = tmp_path / "proj"
    project_dir.mkdir()
    project = Engram(Settings(data_dir=tmp_path / "data")).open_project(project_dir)
    try:
        target = project.memories.add(
            "Users recover a lost login through the /account/recover page, which emails a one-time link.",
            type="gotcha", source="agent_explicit").result().id
        project.memories.add("The CSS build uses PostCSS with autoprefixer.", type="pattern",
                             source="agent_explicit").result()
        access = StoreMemoryAccess(project)
        assert access.wait_ready(120)
        # No shared word with the target: keyword search alone cannot find it.
        found = access.search("forgotten password reset", limit=3)
        assert project.search_if_built() is not None  # built on first use, in the background
        assert found and found[0].id == target
    finally:
        project.close()
