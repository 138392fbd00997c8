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
