"""The hook process's JSON (``lean_json``): the same text as ``json``, the same values back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop.agents.hooks import lean_json

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=5)
                       | st.dictionaries(st.text(), inner, max_size=5), max_leaves=30)


@given(_VALUES)
def test_the_same_text_as_json_and_the_same_value_back(value: Any) -> None:
    for ascii_only in (True, False):
        text = lean_json.dumps(value, ensure_ascii=ascii_only)
        assert text == json.dumps(value, ensure_ascii=ascii_only)
        assert lean_json.loads(text) == value
        assert lean_json.loads(f" \n\t{text}\r\n".encode()) == value


@pytest.mark.parametrize("text", ["", "   ", '{"a":', "{} x", "nul", "[1,]", '{"a" 1}', "\ufeff{}"])
def test_anything_but_one_json_value_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        lean_json.loads(text)
    with pytest.raises(ValueError):
        json.loads(text)


def test_what_json_cannot_write_is_a_type_error() -> None:
    for value in (object(), {1j: 2}, {"a": {1, 2}}):
        with pytest.raises(TypeError):
            lean_json.dumps(value)
