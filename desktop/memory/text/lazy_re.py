"""Regular expressions compiled on first use, for patterns most processes never reach.

A hook answering without the service is a new process for every tool call, and it pays for
every pattern its modules compile at import: the secret scanner's ~70 detectors cost ~30 ms,
the observer's and the triggers' patterns ~15 ms more, although nearly every call uses a few of
them (most texts are turned away by the scanner's cheap literal gates, :mod:`privacy.triggers`,
before any detector runs). A :func:`lazy` pattern is compiled the first time an attribute of it is
used, once per process, and behaves as the compiled pattern from then on.
"""

from __future__ import annotations

import re
from typing import Any, cast


class LazyPattern:
    """A pattern and its flags, compiled when first used. Two threads racing on a first use may
    both compile it: the same pattern, one of them kept; no lock is worth its import here."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now if this is its first use)."""
        found = self._compiled
        if found is None:
            found = self._compiled = re.compile(self._source, self._flags)
        return found

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # an unset slot, or a protocol probe (copy, pickle): not the pattern's
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __reduce__(self) -> tuple[type[LazyPattern], tuple[str, int]]:
        """Copied or pickled (to a worker process) as what it was built from."""
        return (LazyPattern, (self._source, self._flags))


def lazy(source: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, deferred to the pattern's first use."""
    return cast("re.Pattern[str]", LazyPattern(source, flags))
