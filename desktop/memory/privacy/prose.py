"""Secrets the format rules miss: a password in prose, a key split or spaced out, a bare PEM body.

- Prose: "the production database password is Zq8r...", "token: ..." in a sentence.
  The value must look machine- or person-made (a digit or a symbol, or mixed case
  and at least 8 characters): "the password is required" stays prose.
- Split/spaced: a provider-prefixed key broken over lines, or written in groups
  ("AKIA IOSF ODNN 7EXA MPL3", "ghp_abc...\\n...def"). Only text that starts with a
  known prefix is collapsed and re-checked, and the joined key must contain
  digits, so ordinary words after a prefix never fuse into a "key".
- PEM body: three or more full 64-character base64 lines starting with ``MII``
  (the DER header of a key) with no BEGIN line in front.

Each detector yields ``(kind, start, end)``; secrets.scan() merges them with the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from desktop.memory.text.lazy_re import lazy

__all__ = ["prose_spans"]

# Matched against the lower-cased text (same offsets) for speed; the value is read from the original.
_PROSE = lazy(
    r"\b(?P<kw>password|passphrase|passwd|pwd|pass ?code|pin code|secret|token|api[ _-]?key|access[ _-]?key|"
    r"private[ _-]?key|credentials?)"
    r"(?:[ \t]+(?:for|of|on|to|in)[ \t]+(?:the[ \t]+)?[\w.\-]{1,40}){0,2}"
    r"[ \t]*(?:[ \t]is|[ \t]was|[ \t]are|[ \t]reads|[ \t]became|[ \t]set to|[ \t]changed to|:)[ \t]*(?::[ \t]*)?"
    r"[\"'`]?(?P<secret>[^\s\"'`,;()<>\[\]]{6,128})"
)
# Where a match can start (a literal search is far cheaper than trying _PROSE everywhere).
_KEYWORD = lazy(r"pass|pwd|pin code|secret|token|api|access|private|credential")
_COMMON_ENDINGS = (".", "!", "?")

# Provider prefixes whose keys are worth re-assembling when split.
_PREFIX = lazy(r"(?<![A-Za-z0-9_])(?:AKIA|ASIA|ghp_|gho_|ghs_|ghu_|github_pat_|glpat-|sk-ant-|sk-proj-|"
               r"sk-|xox[abposr]-|AIza|npm_|sk_live_|rk_live_)")
_PIECE_SEP = lazy(r"(?:[ \t]*(?:\r?\n|\\n)[ \t]*|[ \t]+|[\"'][ \t]*\+?[ \t]*(?:\r?\n[ \t]*)?[\"'])")
_JOINED = {
    "aws_access_key": lazy(r"(?:AKIA|ASIA)[A-Z0-9]{16}"),
    "github_token": lazy(r"(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{60,90})"),
    "gitlab_token": lazy(r"glpat-[A-Za-z0-9_\-]{20}"),
    "anthropic_key": lazy(r"sk-ant-[A-Za-z0-9_\-]{40,120}"),
    "openai_key": lazy(r"sk-(?:proj-)?[A-Za-z0-9_\-]{40,200}"),
    "slack_token": lazy(r"xox[abposr]-[A-Za-z0-9\-]{20,120}"),
    "google_api_key": lazy(r"AIza[A-Za-z0-9_\-]{35}"),
    "npm_token": lazy(r"npm_[A-Za-z0-9]{36}"),
    "stripe_key": lazy(r"[sr]k_live_[A-Za-z0-9]{24,99}"),
}
_PEM_BODY = lazy(r"(?m)^[ \t]*MII[A-Za-z0-9+/]{61}[ \t]*\r?\n(?:[ \t]*[A-Za-z0-9+/]{64}[ \t]*\r?\n){2,}"
                 r"(?:[ \t]*[A-Za-z0-9+/]{1,64}={0,2}[ \t]*(?:\r?\n|$))?")


def _plausible_prose_value(value: str) -> bool:
    value = value.rstrip("".join(_COMMON_ENDINGS))
    if len(value) < 6 or value.startswith(("[REDACTED", "$", "{", "<", "%")):
        return False
    low = value.lower()
    if low in ("required", "optional", "missing", "invalid", "expired", "correct", "incorrect", "stored",
               "rotated", "changed", "hidden", "masked", "redacted", "unknown", "defined", "configured"):
        return False
    if "..." in value or "\u2026" in value or "xxxx" in low or "***" in value:
        return False
    if value.startswith(("http://", "https://", "/", "./", "~/")):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() and c not in "_-." for c in value)
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    if not (has_digit or has_symbol or (mixed and len(value) >= 8)):
        return False
    # Identifiers and version numbers in prose: "token is TokenValidatorFactory", "key is v1.2.3".
    if re.fullmatch(r"v?\d+(?:\.\d+)+", value) or re.fullmatch(r"(?:[A-Z][a-z]+){2,}", value):
        return False
    return not re.fullmatch(r"\d{1,5}", value)


def _prose(text: str) -> Iterator[tuple[str, int, int]]:
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters change length when lower-cased
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    for k in _KEYWORD.finditer(lowered):
        m = _PROSE.match(lowered, k.start())
        if m is None:
            continue
        value = text[m.start("secret"):m.end("secret")]
        if _plausible_prose_value(value):
            end = m.end("secret")
            while end > m.start("secret") and text[end - 1] in _COMMON_ENDINGS:
                end -= 1
            yield "prose_secret", m.start("secret"), end


_PREFIX_LITERALS = ("AKIA", "ASIA", "gh", "glpat-", "sk-", "xox", "AIza", "npm_", "_live_")


def _split(text: str) -> Iterator[tuple[str, int, int]]:
    if not any(p in text for p in _PREFIX_LITERALS):
        return
    for m in _PREFIX.finditer(text):
        start = m.start()
        # Collapse separators inside a 400-character window, keeping a map back to offsets.
        window = text[start:start + 400]
        joined: list[str] = []
        where: list[int] = []
        pos = 0
        pieces = 0
        while pos < len(window):
            sep = _PIECE_SEP.match(window, pos)
            if sep and sep.end() > pos and joined:
                pos = sep.end()
                pieces += 1
                continue
            ch = window[pos]
            if not (ch.isalnum() or ch in "_-"):
                break
            joined.append(ch)
            where.append(start + pos)
            pos += 1
        if pieces == 0:
            continue  # not split: the format rules see it whole
        flat = "".join(joined)
        for kind, rx in _JOINED.items():
            hit = rx.match(flat)
            if hit and sum(c.isdigit() for c in hit.group()) >= 2:
                last = where[hit.end() - 1] + 1
                if " " in text[start:last] or "\n" in text[start:last] or "\\n" in text[start:last] \
                        or "+" in text[start:last]:
                    yield f"{kind}_split", start, last
                break


def _pem_body(text: str) -> Iterator[tuple[str, int, int]]:
    if "MII" not in text:
        return
    for m in _PEM_BODY.finditer(text):
        before = text[max(0, m.start() - 120):m.start()]
        if "-----BEGIN" in before or "CERTIFICATE" in before:
            continue  # a whole block (caught as private_key) or a public certificate
        yield "private_key_body", m.start(), m.end()


def prose_spans(text: str, *, prose: bool = True) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of secrets in prose, split/spaced keys and headerless PEM bodies.

    ``prose=False`` skips the prose detector (the caller knows its keywords are absent).
    """
    if prose:
        yield from _prose(text)
    yield from _split(text)
    yield from _pem_body(text)
