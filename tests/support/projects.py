"""A real Project over a database a test already opened, searching by keywords only.

For tests of the memory doors (StoreMemoryAccess, the MCP tools) on a bare ``db`` fixture:
the project has no embedding model, so hybrid search never builds and every search is the
FTS5 path, exactly what a door does while the model is still loading.
"""

from __future__ import annotations

from pathlib import Path

from desktop.memory.embedding.base import MODEL_MISSING, EmbeddingError, EmbeddingProvider
from desktop.memory.models import CoreModels
from desktop.memory.project import Project
from desktop.memory.projects import ProjectInfo
from desktop.memory.store.database import Database
from desktop.settings import Settings


class KeywordsOnly(CoreModels):
    """No embedding model: search by meaning is unavailable, keyword search answers."""

    def embedding_provider(self) -> EmbeddingProvider:
        raise EmbeddingError(MODEL_MISSING, "no embedding model in this test")


def project_on(db: Database, root: Path | None = None) -> Project:
    """A Project over ``db`` (the test closes ``db``; the project adds nothing that needs closing)."""
    folder = Path(root) if root is not None else Path(db.path).parent
    settings = Settings(data_dir=folder / "data")
    return Project(ProjectInfo(root=folder, name=folder.name, db_path=Path(db.path)), db, settings,
                   KeywordsOnly(settings))
