"""A lazily compiled pattern is compiled on first use and then behaves as the compiled one."""

from __future__ import annotations

import re

from desktop.memory.text.lazy_re import LazyPattern, lazy


def test_a_lazy_pattern_compiles_on_first_use_and_matches_as_compiled() -> None:
    source = r"(?P<kw>token|secret)[ \t]*=[ \t]*(?P<value>\w{8,})"
    pattern = lazy(source, re.I)
    assert isinstance(pattern, LazyPattern) and pattern._compiled is None  # importing compiled nothing
    text = "x TOKEN = abcdefgh12 and secret=zzzzzzzzz"
    real = re.compile(source, re.I)
    assert [m.span("value") for m in pattern.finditer(text)] == [m.span("value") for m in real.finditer(text)]
    assert pattern._compiled is not None and pattern.groupindex == real.groupindex
    assert pattern.sub("<r>", text) == real.sub("<r>", text) and pattern.search("nothing") is None


def test_a_lazy_pattern_copies_and_pickles_as_what_it_was_built_from() -> None:
    # A pattern module-level code hands to a worker process is pickled; copy probes for protocol methods.
    import copy
    import pickle

    pattern = lazy(r"\bgo test\b", re.I)
    for twin in (copy.copy(pattern), pickle.loads(pickle.dumps(pattern))):
        assert twin.search("GO TEST ./...") is not None and twin.flags == pattern.flags
    pattern.match("x")  # compiled: still copies as its source
    assert pickle.loads(pickle.dumps(pattern)).pattern == r"\bgo test\b"
