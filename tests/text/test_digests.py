"""``desktop.digests`` gives hashlib's digests and hmac's comparison without loading OpenSSL."""

from __future__ import annotations

import hashlib
import hmac

from hypothesis import given
from hypothesis import strategies as st

from desktop.digests import blake2b, compare_digest, sha256


@given(st.binary(max_size=4096))
def test_sha256_is_hashlibs(data: bytes) -> None:
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()


@given(st.binary(max_size=4096), st.binary(min_size=1, max_size=64), st.integers(1, 64))
def test_keyed_blake2b_is_hashlibs(data: bytes, key: bytes, size: int) -> None:
    assert blake2b(data, key=key, digest_size=size).digest() == hashlib.blake2b(data, key=key,
                                                                                digest_size=size).digest()


@given(st.binary(max_size=64), st.binary(max_size=64))
def test_compare_digest_is_hmacs(a: bytes, b: bytes) -> None:
    assert compare_digest(a, b) == hmac.compare_digest(a, b) == (a == b)
    assert compare_digest(a, a)
