"""SHA-256, BLAKE2b and a constant-time comparison from CPython's own modules, without OpenSSL.

``hashlib`` loads OpenSSL's ``_hashlib`` when it is imported, and ``hmac`` imports ``hashlib``:
6-12 ms of every hook process that answers without the service, spent on a few digests of short
texts (a project's database name, a memory's content key, the secret scanner's tag, a few code
anchors). CPython's own SHA-256 (``_sha2`` from 3.12, ``_sha256`` before) and BLAKE2 (``_blake2``,
which ``hashlib.blake2b`` is) give the same digests, and ``hmac.compare_digest`` is
``_operator._compare_digest``; ``hashlib``/``hmac`` are the fallback on an interpreter without them.
On large data OpenSSL's SHA-256 is 4-6x faster (hardware instructions): bulk hashing (the staleness
sweep) uses ``hashlib``.
"""

from __future__ import annotations

try:
    from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:
        from hashlib import sha256  # type: ignore[assignment,no-redef,unused-ignore]
try:
    from _blake2 import blake2b
except ImportError:
    from hashlib import blake2b  # type: ignore[assignment,no-redef,unused-ignore]
try:
    from _operator import _compare_digest as compare_digest
except ImportError:
    from hmac import compare_digest  # type: ignore[assignment,no-redef,unused-ignore]

__all__ = ["blake2b", "compare_digest", "sha256"]
