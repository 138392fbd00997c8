"""What one index run reports: its progress as it goes, and what it did at the end."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["IndexProgress", "IndexReport"]


@dataclass
class IndexProgress:
    """One progress report: phase (scan, parse, resolve, modules, chunks, closure), counts, file."""

    phase: str
    done: int
    total: int
    current: str = ""


@dataclass
class IndexReport:
    """What a run did."""

    indexed: int = 0
    unchanged: int = 0
    deleted: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_files: list[tuple[str, str]] = field(default_factory=list)
    partial: int = 0
    unsupported: int = 0
    chunks: int = 0
    modules: int = 0
    closure_rows: int = 0
    pooled: int = 0  # files parsed by worker processes
    seconds: float = 0.0
    cancelled: bool = False

    def skip(self, path: str, reason: str) -> None:
        """Count one skipped file or folder."""
        key = reason.split(":", 1)[0]
        self.skipped[key] = self.skipped.get(key, 0) + 1
        self.skipped_files.append((path, reason))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {"indexed": self.indexed, "unchanged": self.unchanged, "deleted": self.deleted,
                "partial": self.partial, "skipped": self.skipped, "unsupported": self.unsupported,
                "chunks": self.chunks, "modules": self.modules, "closure_rows": self.closure_rows,
                "pooled": self.pooled, "seconds": round(self.seconds, 3), "cancelled": self.cancelled,
                "skipped_files": [{"path": p, "reason": r} for p, r in self.skipped_files[:200]]}
