"""SHA-256, BLAKE2b and a constant-time comparison from CPython's own modules, without OpenSSL.

``hashlib`` loads OpenSSL's ``_hashlib`` when it is imported, and ``hmac`` imports ``hashlib``:
6-12 ms of every hook process that answers without the service, spent on three digests of a few
bytes (a project's database name, a memory's content key, the secret scanner's tag). CPython
builds SHA-256 (``_sha2`` from 3.12, ``_sha256`` before) and BLAKE2 (``_blake2``) in, and
``hmac.compare_digest`` is ``_operator._compare_digest``: the same digests and the same
comparison, with ``hashlib``/``hmac`` as the fallback on an interpreter that lacks them.
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
