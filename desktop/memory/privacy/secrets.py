"""Secret scanner used at the database write boundary and again on export/injection.

Two layers of detection:

1. Known credential formats (provider prefixes, PEM blocks, JWTs, passwords in
   connection strings, ``password = "..."`` style assignments).  These are precise
   and carry a stable ``kind`` code the UI can word.
2. A Shannon-entropy check for long random-looking tokens.  It is deliberately
   conservative: a token must mix upper case, lower case and digits, look random
   (many character-class switches, short camel-case "words") and must not sit in a
   context that is known to hold hashes (lock-file integrity strings, ``sha256:``
   digests, go.sum ``h1:`` hashes, ``data:...;base64,`` payloads).  Hex-only and
   lower-case-only tokens are never flagged by entropy alone: those are git SHAs,
   UUIDs and content hashes, and flagging them would make the scanner useless
   (see ``entropy.py``).

Every regex is compiled at import, uses bounded or unambiguous quantifiers (no
nested repetition), so scanning is linear in the input size.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from desktop.memory.privacy.entropy import high_entropy_spans
from desktop.memory.privacy.prose import prose_spans
from desktop.memory.privacy.triggers import (
    ASSIGN_GATE,
    PROSE_GATE,
    Trigger,
    ascii_gate,
    cased,
    folded,
    folded_confirmed,
    has_token_run,
    non_ascii_gate,
    register,
)
from desktop.memory.text.lazy_re import lazy

__all__ = ["SecretFinding", "contains_secret", "redact", "scan"]


@dataclass(frozen=True)
class SecretFinding:
    """One secret found in a text: a stable ``kind`` code and the ``[start, end)`` span."""

    kind: str
    start: int
    end: int


# A validator receives the match and returns the (start, end) span to redact, or
# None when the match turns out not to be a secret.
_Validator = Callable[[re.Match[str]], tuple[int, int] | None]

_B64URL = r"A-Za-z0-9_\-"


def _whole(m: re.Match[str]) -> tuple[int, int] | None:
    return m.span()


def _group(name: str) -> _Validator:
    def span(m: re.Match[str]) -> tuple[int, int] | None:
        if m.group(name) is None or _is_placeholder(m.group(name)):
            return None
        return m.span(name)

    return span


def _quoted_group(name: str) -> _Validator:
    """The group's span without its quotes; None for a placeholder (``$MYSQL_PWD``, ``<password>``)."""
    def span(m: re.Match[str]) -> tuple[int, int] | None:
        value = m.group(name)
        if value is None:
            return None
        start, end = m.span(name)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            start, end, value = start + 1, end - 1, value[1:-1]
        if _is_placeholder(value) or value.startswith("-"):
            return None
        return start, end

    return span


class _AnyOf:
    """A rule's trigger that fires when any of its parts does (each part is in the gate's union)."""

    def __init__(self, parts: tuple[Trigger, ...]) -> None:
        self.parts = parts

    def __call__(self, text: str, lowered: str) -> bool:
        """Whether one of the parts fires."""
        return any(part(text, lowered) for part in self.parts)


def _url_password(m: re.Match[str]) -> tuple[int, int] | None:
    """The password of ``scheme://user:password@host``, unless the "password" is a port and a path."""
    value = m.group("secret")
    if value is None or _is_placeholder(value) or _PORT_THEN_PATH.match(value):
        return None
    return m.span("secret")


_PORT_THEN_PATH = lazy(r"\d{1,5}(?:/|$)")


def _login_password(m: re.Match[str]) -> tuple[int, int] | None:
    """A password after ``login user/``: made by a person or a machine (a digit or a symbol), not a word."""
    value = m.group("secret").rstrip(".")
    if _is_placeholder(value) or len(value) < 4:
        return None
    if not any(c.isdigit() or not (c.isalnum() or c in "_-.") for c in value):
        return None  # "login page/form", "login handler/route"
    start = m.start("secret")
    return start, start + len(value)


_FROM_OPERATOR = frozenset({"hex_key"})
#: Words in a key-like name that say the hex value is a hash or an identifier, not a secret.
_HEX_NOT_SECRET = frozenset({"hash", "sha", "sha1", "sha256", "sha512", "md5", "checksum", "digest", "fingerprint",
                             "etag", "public", "pub", "cache", "commit", "rev", "revision", "uuid", "guid", "id",
                             "integrity", "primary", "foreign", "sort", "partition", "row", "lookup", "dedup",
                             "idempotency", "object", "trace", "span", "request", "correlation", "build"})
_NAME_WORDS = lazy(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


_KEY_NAME = lazy(r"[\w.\-]{1,100}[\"']?[ \t]*$")
_KEY_WORD = lazy(r"key|secret|token|salt|seed|pepper", re.I)


def _hex_key(m: re.Match[str]) -> tuple[int, int] | None:
    """The hex value when the name before the operator is key-like and names no hash or id."""
    value = m.group("secret")
    if not any(c.isdigit() for c in value) or not any(c.isalpha() for c in value):
        return None
    text = m.string
    name = _KEY_NAME.search(text, max(0, m.start() - 104), m.start())
    if name is None or not _KEY_WORD.search(name.group()):
        return None
    words = {w.lower() for w in _NAME_WORDS.findall(name.group())}
    return None if words & _HEX_NOT_SECRET else m.span("secret")


def _mixed(m: re.Match[str]) -> tuple[int, int] | None:
    # Prefix-only formats (sk-, glpat-) also match hyphenated words such as
    # "sk-learn-pipeline-config"; real keys always contain a digit.
    body = m.group("body")
    if not any(c.isdigit() for c in body) or not any(c.isalpha() for c in body):
        return None
    return m.span()


# (kind, priority, regex, validator, trigger).  Lower priority wins an overlap, so the
# specific provider formats beat generic assignments, which beat entropy. The trigger is
# what the regex cannot match without (triggers.py): a rule without it is not run.
_KNOWN: list[tuple[str, int, re.Pattern[str], _Validator, Callable[[str, str], bool]]] = [
    (
        "private_key",
        0,
        # Full block when the END line is present, else header plus base64 lines
        # (a truncated key pasted into a chat is still a key).
        lazy(
            r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]{0,16000}?-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:(?:\r?\n|(?:\\r)?\\n)[ \t]*[A-Za-z0-9+/=:\- ]{0,200})*)"
        ),
        _whole,
        cased("-----BEGIN"),
    ),
    ("anthropic_key", 1, lazy(rf"sk-ant-(?P<body>[{_B64URL}]{{32,200}})"), _mixed, cased("sk-ant-")),
    (
        "openai_key",
        2,
        lazy(rf"sk-(?:proj-|svcacct-|admin-|None-)?(?P<body>[{_B64URL}]{{20,250}})"),
        _mixed,
        cased("sk-"),
    ),
    ("github_token", 1, lazy(r"gh[pousr]_[A-Za-z0-9]{36,255}\b"), _whole,
     cased("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    ("github_token", 1, lazy(r"github_pat_[A-Za-z0-9_]{22,255}\b"), _whole, cased("github_pat_")),
    ("gitlab_token", 1, lazy(rf"glpat-(?P<body>[{_B64URL}]{{20,64}})"), _mixed, cased("glpat-")),
    (
        "aws_access_key",
        1,
        lazy(r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])"),
        _whole,
        cased("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    ),
    (
        "aws_secret_key",
        1,
        lazy(
            r"(?i:aws_?secret_?(?:access_?)?key)[\"']?[ \t]*(?:=|:|=>)[ \t]*[\"']?"
            r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
        ),
        _group("secret"),
        folded("awssecret", "aws_secret"),
    ),
    ("google_api_key", 1, lazy(rf"AIza[{_B64URL}]{{35}}(?![{_B64URL}])"), _whole, cased("AIza")),
    ("slack_token", 1, lazy(r"xox[abposr]-[A-Za-z0-9\-]{10,250}"), _whole, cased("xox")),
    ("slack_token", 1, lazy(r"xapp-\d-[A-Za-z0-9\-]{10,250}"), _whole, cased("xapp-")),
    (
        "slack_webhook",
        0,
        lazy(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/\-]{20,200}"),
        _whole,
        cased("hooks.slack.com/"),
    ),
    ("stripe_key", 1, lazy(r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,250}"), _whole,
     cased("sk_live_", "sk_test_", "rk_live_", "rk_test_")),
    ("stripe_key", 1, lazy(r"pk_live_[A-Za-z0-9]{16,250}"), _whole, cased("pk_live_")),
    ("npm_token", 1, lazy(r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"), _whole, cased("npm_")),
    ("twilio_key", 1, lazy(r"SK[0-9a-f]{32}(?![A-Za-z0-9])"), _whole, cased("SK", confirm=r"SK[0-9a-f]{32}")),
    (
        "sendgrid_key",
        1,
        lazy(rf"SG\.[{_B64URL}]{{22}}\.[{_B64URL}]{{43}}(?![{_B64URL}])"),
        _whole,
        cased("SG."),
    ),
    (
        "jwt",
        1,
        lazy(rf"eyJ[{_B64URL}]{{8,4000}}\.eyJ[{_B64URL}]{{4,8000}}\.[{_B64URL}]{{0,2000}}"),
        _whole,
        cased("eyJ"),
    ),
    (
        "connection_string",
        2,
        # scheme://user:password@host — only the password is redacted, so the
        # memory still says which database and which user. A password may hold "/";
        # "host:8080/path@x" (a port, then a path) is no password.
        lazy(
            r"\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@'\"<>]{0,128}:"
            r"(?P<secret>[^\s@'\"<>]{1,256})@(?=[A-Za-z0-9\[])"
        ),
        _url_password,
        cased("://", confirm=r"://[^\s:/@'\"<>]{0,128}:[^\s@'\"<>]{1,256}@"),
    ),
    (
        # Database and cache clients that take the password as an argument:
        # mysql -pS3cret, mysqldump -p'S3cret', redis-cli -a S3cret, curl -u user:S3cret.
        "cli_password",
        2,
        lazy(
            r"m(?:ysql(?:dump|admin|import|show|check|binlog)?|ariadb(?:-dump|-admin)?)\b[^\n;|&]{0,300}?"
            r"[ \t]-p(?P<secret>'[^'\n]{1,128}'|\"[^\"\n]{1,128}\"|[^\s'\"]{1,128})"
        ),
        _quoted_group("secret"),
        cased("mysql", "mariadb", confirm=r"(?:mysql|mariadb)[\w-]*\b[^\n;|&]{0,300}?[ \t]-p[^\s]"),
    ),
    (
        "cli_password",
        2,
        lazy(
            r"redis-cli\b[^\n;|&]{0,300}?[ \t](?:-a|--pass)[ \t]+"
            r"(?P<secret>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s'\"]{1,256})"
        ),
        _quoted_group("secret"),
        cased("redis-cli", confirm=r"redis-cli\b[^\n;|&]{0,300}?[ \t](?:-a|--pass)[ \t]+[^\s-]"),
    ),
    (
        "cli_password",
        2,
        lazy(
            r"curl\b[^\n;|&]{0,300}?[ \t](?:-u|--user|-U|--proxy-user)(?:[ \t]+|=)?"
            r"['\"]?[^\s:'\"]{1,128}:(?P<secret>[^\s'\"]{1,256})"
        ),
        _group("secret"),
        cased("curl", confirm=r"curl\b[^\n;|&]{0,300}?[ \t](?:-u|--user|-U|--proxy-user)(?:[ \t]+|=)?"
                              r"['\"]?[^\s:'\"]{1,128}:[^\s'\"]"),
    ),
    (
        # More clients that take a password on their command line: sshpass -p, docker login -p,
        # sqlcmd -P, mongosh -p, keytool -storepass, openssl -passin pass:.
        "cli_password",
        2,
        lazy(
            r"(?:sshpass|docker(?:[ \t]+login)|podman[ \t]+login|sqlcmd|mongo(?:sh|dump|restore|import|export)?)\b"
            r"[^\n;|&]{0,300}?[ \t](?:-p|-P|--password)(?:[ \t]+|=)"
            r"(?P<secret>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s'\"]{1,256})"
        ),
        _quoted_group("secret"),
        _AnyOf(tuple(cased(lit, confirm=lit + r"\w*\b[^\n;|&]{0,300}?[ \t](?:-p|-P|--password)(?:[ \t]+|=)[^\s-]")
                     for lit in ("sshpass", "docker", "podman", "sqlcmd", "mongo"))),
    ),
    (
        # keytool -storepass X / -keypass X; openssl -pass pass:X / -passin pass:X (never env: or file:).
        "cli_password",
        2,
        lazy(r"-(?:store|key|srcstore|deststore|srckey|destkey)pass[ \t]+"
                   r"(?P<secret>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s'\"]{1,256})"),
        _quoted_group("secret"),
        cased("pass", confirm=r"-(?:store|key|srcstore|deststore|srckey|destkey)pass[ \t]+[^\s-]"),
    ),
    (
        "cli_password",
        2,
        lazy(r"-pass(?:in|out)?[ \t]+pass:(?P<secret>'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s'\"]{1,256})"),
        _quoted_group("secret"),
        cased("pass:", confirm=r"-pass(?:in|out)?[ \t]+pass:\S"),
    ),
    (
        # "login admin/Passw0rd", "log in with root / t0ps3cret!": a username/password pair in prose.
        "login_pair",
        3,
        lazy(
            r"[Ll][Oo][Gg](?:[ -]?[Ii][Nn]|[Oo][Nn])\b[ \t]*(?::|=|(?i:[ \t]+(?:with|as|is|using)))?"
            r"[ \t]*[\"'`]?[A-Za-z0-9._@+-]{2,64}[ \t]?/[ \t]?(?P<secret>[^\s/\"'`,;()<>\[\]]{4,128})"
        ),
        _login_password,
        folded_confirmed(("log",), r"log(?:[ -]?in|on)[ \t]*(?::|=|[ \t]+(?:with|as|is|using))?[ \t]*[\"'`]?"
                                  r"[a-z0-9._@+-]{2,64}[ \t]?/[ \t]?[^\s/\"'`,;()<>\[\]]{4}"),
    ),
    (
        # A long hex key assigned to a key-like name the assignment rule does not know
        # (HMAC_KEY=..., secret_key_base: ..., APP_KEY = "..."): hashes and ids are excluded by name.
        "hex_key",
        4,
        # Matched from the operator (a name-first pattern tries every word of a long text); the
        # validator reads the name back from there.
        lazy(r"(?:=>|:=|=|:)[ \t]*[\"']?(?P<secret>[0-9a-fA-F]{32,256})(?![0-9A-Za-z])"),
        _hex_key,
        # Where the value is (an operator, then 32 hex digits) is rarer than where a key-like word is.
        folded_confirmed(("key", "secret", "token", "salt", "seed", "pepper"), r"[:=][ \t]*[\"']?[0-9a-f]{32}"),
    ),
    (
        "auth_header",
        2,
        lazy(
            r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?i:bearer|basic|token)[ \t]+"
            r"(?P<secret>[A-Za-z0-9._~+/\-]{8,4000}=*)"
        ),
        _group("secret"),
        folded("authorization"),
    ),
]

# ---------------------------------------------------------------------------
# Assignments: password = "...", api_key: ..., TOKEN=..., "secret": "..."
# ---------------------------------------------------------------------------

# Matched against text.lower() (same offsets) because a case-insensitive
# alternation is ~5x slower in the re engine; values are read from the original.
_ASSIGN_KEYWORDS = (
    r"(?P<kw>password|passwd|pwd|pass|secret|token|credentials?|"
    r"(?:api|access|secret|private|signing|encryption|master|client)[_\-]?key)"
)
_ASSIGN_REST = (
    r"[\"']?[ \t]*"
    r"(?P<op>=>|:=|(?::[ \t]*(?:str|bytes|string|String))?[ \t]*=(?!=)|:(?!:))[ \t]*"
    r"(?:\"(?P<dq>[^\"\\\n]{1,256})\"|'(?P<sq>[^'\\\n]{1,256})'|`(?P<bq>[^`\\\n]{1,256})`"
    r"|(?P<bare>[^\s\"'`,;(){}\[\]<>#]{1,256}))"
)
_ASSIGN = lazy(_ASSIGN_KEYWORDS + _ASSIGN_REST)
_ASSIGN_ANYCASE = lazy(f"(?i:{_ASSIGN_KEYWORDS}){_ASSIGN_REST}")

_PLACEHOLDER_WORDS_TEXT = (
    "none null nil true false undefined changeme change_me password passwd secret token example "
    "placeholder redacted required optional string str bytes bool int env default empty hidden masked "
    "todo fixme dummy test "
)
_PLACEHOLDER_WORDS = frozenset(_PLACEHOLDER_WORDS_TEXT.split())
_REFERENCE = lazy(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# Two or more words joined by case or separators; each iteration must start with a
# separator or capital, so the pattern is unambiguous (no backtracking blow-up).
_IDENT_WORDS = lazy(r"[A-Za-z][a-z]*(?:(?:[_.\-][A-Za-z]|[A-Z])[a-z]*)+")


def _is_placeholder(value: str) -> bool:
    """True for templated, masked or already-redacted values, which are not secrets."""
    v = value.strip().lower()
    if not v or v in _PLACEHOLDER_WORDS:
        return True
    if v[0] in "$%{<[*#" or v.startswith(("your", "arn:")):
        # ${VAR}, $VAR, %(name)s, {{ secrets.X }}, <token>, [REDACTED:kind], ****, #fff
        return True
    return "xxxx" in v or "***" in v or "..." in v or "\u2026" in v or v.strip("x*.-_#") == ""


_PASSWORD_KEYWORDS = frozenset(("password", "passwd", "pwd", "pass", "credential", "credentials"))
_HEX = frozenset("0123456789abcdefABCDEF")


def _env_name_suffix(text: str, kw_start: int, kw_end: int) -> bool:
    """An upper-case environment name ending in a long keyword: ``PGPASSWORD``, ``APITOKEN``.

    Short keywords (``pass``, ``pwd``) stay word-bounded: ``COMPASS``, ``BYPASS`` are words.
    """
    if kw_end - kw_start < 5 or not text[kw_start:kw_end].isupper():
        return False
    start = kw_start
    while start > 0 and (text[start - 1].isupper() or text[start - 1].isdigit() or text[start - 1] == "_"):
        start -= 1
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")


def _plausible_value(value: str, keyword: str) -> bool:
    """Whether a literal on the right of a secret-named key can be a secret."""
    has_digit = any(c.isdigit() for c in value)
    if not has_digit and _IDENT_WORDS.fullmatch(value.lower() if value.isupper() else value):
        return False  # "password_hash", "X-Access-Token", "PUBLIC_KEY_OR_PASSWORD"
    if set(value) <= _HEX and len(value) < 20:
        return False  # short hex: ids, checksums, colour values
    if keyword.lower() in _PASSWORD_KEYWORDS:
        return True  # human passwords can be plain words
    # Tokens and keys are machine-made: they have digits or are long and mixed.
    return has_digit or (len(value) >= 16 and not value.islower() and not value.isupper())


def _assignment(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """Span of the secret value of a ``key = value`` match on ``text``, or None."""
    kw_start = m.start("kw")
    # The keyword must end the key and start at a word boundary (or a camel-case
    # boundary as in "dbPassword"): "compass = 1" and "bypass: x" are not secrets,
    # but an environment variable that ends in a long keyword is (PGPASSWORD=...).
    if kw_start > 0:
        prev = text[kw_start - 1]
        if prev.isalpha() and not (prev.islower() and text[kw_start].isupper()) \
                and not _env_name_suffix(text, kw_start, m.end("kw")):
            return None
        if prev.isdigit():
            return None
    for name in ("dq", "sq", "bq"):
        if m.group(name) is not None:
            value = text[m.start(name) : m.end(name)]
            if len(value) < 6 or _is_placeholder(value) or " " in value or "\t" in value:
                return None
            return m.span(name) if _plausible_value(value, m.group("kw")) else None
    end = m.end("bare")
    value = text[m.start("bare") : end]
    if len(value) < 6 or _is_placeholder(value):
        return None
    if end < len(text) and text[end] in "([":  # getpass(), os.environ["X"]
        return None
    if value.startswith(("/", "./", "~/", "http://", "https://")) or "://" in value:
        return None
    if _REFERENCE.fullmatch(value):
        # An identifier on the right is a variable in code (password = password)...
        key_start = kw_start
        while key_start > 0 and (text[key_start - 1].isalnum() or text[key_start - 1] == "_"):
            key_start -= 1
        key = text[key_start : m.end("kw")]
        op_start, op_end = m.span("op")
        env_style = (
            key.isupper() and m.group("op") == "=" and text[op_start - 1] != " " and text[op_end : op_end + 1] != " "
        )
        # ...unless it is an env-file line (API_KEY=abc) or plainly not a word.
        if not env_style and ("." in value or not any(c.isdigit() for c in value)):
            return None
    return m.span("bare") if _plausible_value(value, m.group("kw")) else None


_PEM_BODY = register(cased("MII"))  # prose._pem_body
_SPLIT = register(cased("AKIA", "ASIA", "ghp_", "gho_", "ghs_", "ghu_", "github_pat_", "glpat-", "sk-", "xox",
                        "AIza", "npm_", "sk_live_", "rk_live_"))  # prose._split


def might_contain_secret(text: str) -> bool:
    """Cheap pre-check: False means no rule of :func:`scan` can match ``text``.

    Monotone on ASCII text: a text that contains one that passes also passes (the
    write boundary tests many values joined in one string this way).
    """
    if text.isascii():
        return ascii_gate(text, text.lower())
    return non_ascii_gate(text)


# ---------------------------------------------------------------------------
# <private> ... </private>: what the user marked as never to be kept
# ---------------------------------------------------------------------------

_PRIVATE_TAG = lazy(r"<(/?)private>", re.I)
_PRIVATE = register(folded("private>"))


def private_spans(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` between ``<private>`` and ``</private>``, tags included.

    A text cut by a limit keeps its privacy: an opening tag never closed runs to the end,
    and a closing tag never opened runs from the start (or from the previous span's end).
    """
    spans: list[tuple[int, int]] = []
    opened: int | None = None
    last = 0
    for m in _PRIVATE_TAG.finditer(text):
        if not m.group(1):
            opened = m.start() if opened is None else opened
            continue
        spans.append((last if opened is None else opened, m.end()))
        last, opened = m.end(), None
    if opened is not None:
        spans.append((opened, len(text)))
    return spans


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def scan(text: str) -> list[SecretFinding]:
    """Find secrets in ``text``; findings are non-overlapping and sorted by start.

    Long texts are remembered (a small LRU): the write ops scan a memory's content and
    the writer's boundary sees the same string again a moment later.
    """
    if _CACHE_MIN_CHARS <= len(text) <= _CACHE_MAX_CHARS:
        return list(_scan_cached(text))
    return _scan(text)


# Memory-sized texts only: short ones are cheap anyway (the pre-check), and a huge text
# (a file, a whole transcript) is scanned once and must not be held in memory.
_CACHE_MIN_CHARS = 128
_CACHE_MAX_CHARS = 20_000


@lru_cache(maxsize=256)
def _scan_cached(text: str) -> tuple[SecretFinding, ...]:
    return tuple(_scan(text))


def _scan(text: str, *, gated: bool = True) -> list[SecretFinding]:
    """Find secrets in ``text``; findings are non-overlapping and sorted by start.

    Specific formats win over generic assignments, which win over the entropy
    check, so ``OPENAI_API_KEY=sk-...`` is reported once, as ``openai_key``.
    A rule whose trigger (triggers.py) is absent from an ASCII text cannot match
    there and is not run; a non-ASCII text runs every rule once the gate passes.
    ``gated=False`` runs every rule regardless (the reference the tests hold the gates to).
    """
    if not text:
        return []
    lowered = text.lower()
    every = not gated or not text.isascii()
    if every:
        if gated and not might_contain_secret(text):
            return []
    elif not ascii_gate(text, lowered):
        return []
    candidates: list[tuple[int, int, int, str]] = []  # (priority, start, -end, kind)
    if every or _PRIVATE(text, lowered):  # before every other rule: a secret inside is covered by it
        candidates += [(-1, start, -end, "private") for start, end in private_spans(text)]
    for kind, priority, pattern, validate, trigger in _KNOWN:
        if not every and not trigger(text, lowered):
            continue
        for m in pattern.finditer(text):
            # Patterns start with a literal (fast search) instead of \b, so the
            # word boundary is checked here: "mask_live_..." is not a Stripe key.
            # (A rule matched from its operator reads its name back itself.)
            if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_") \
                    and kind not in _FROM_OPERATOR:
                continue
            span = validate(m)
            if span is not None and span[1] > span[0]:
                candidates.append((priority, span[0], -span[1], kind))
    # A few characters (e.g. U+0130) change length when lower-cased; fall back then.
    same_offsets = len(lowered) == len(text)
    if every or ASSIGN_GATE.search(lowered):
        assignments = _ASSIGN.finditer(lowered) if same_offsets else _ASSIGN_ANYCASE.finditer(text)
        for m in assignments:
            span = _assignment(m, text)
            if span is not None:
                candidates.append((5, span[0], -span[1], "password_assignment"))
    if every or has_token_run(text):
        for start, end in high_entropy_spans(text):
            candidates.append((9, start, -end, "high_entropy"))
    prose = every or PROSE_GATE.search(lowered) is not None
    if prose or _SPLIT(text, lowered) or _PEM_BODY(text, lowered):
        for kind, start, end in prose_spans(text, prose=prose):
            # After every precise rule: the same span found as a known format keeps that kind.
            candidates.append((10, start, -end, kind))

    candidates.sort()
    starts: list[int] = []
    accepted: list[SecretFinding] = []  # kept sorted by start
    for _priority, start, neg_end, kind in candidates:
        end = -neg_end
        i = bisect_left(starts, start)
        if i > 0 and accepted[i - 1].end > start:
            continue
        if i < len(accepted) and accepted[i].start < end:
            continue
        starts.insert(i, start)
        accepted.insert(i, SecretFinding(kind, start, end))
    return accepted


def redact(text: str) -> tuple[str, list[SecretFinding]]:
    """Replace every finding with ``[REDACTED:<kind>]`` and return the new text and findings.

    Connection strings and assignments only lose their secret part, so
    ``postgres://app:[REDACTED:connection_string]@db/prod`` still says where it points.
    Redacting already-redacted text is a no-op.
    """
    findings = scan(text)
    if not findings:
        return text, findings
    out: list[str] = []
    pos = 0
    for f in findings:
        out.append(text[pos : f.start])
        out.append(f"[REDACTED:{f.kind}]")
        pos = f.end
    out.append(text[pos:])
    return "".join(out), findings


def contains_secret(text: str) -> bool:
    """True when ``scan(text)`` would report at least one finding."""
    return bool(scan(text))
