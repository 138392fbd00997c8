"""Tests for desktop.memory.privacy.secrets: recall on real formats, precision on look-alikes.

Credentials are generated at run time with a seeded RNG in the exact shape of the
real thing (prefix, alphabet, length), so this file never contains a literal that
another secret scanner would choke on, and the corpus is reproducible.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import random
import string
import sysconfig
import time
import uuid
from pathlib import Path

import pytest

from desktop.memory.privacy import SecretFinding, contains_secret, redact, scan

_RNG = random.Random(20240611)
ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"


def rnd(alphabet: str, n: int) -> str:
    """A random string; retried until it mixes classes the way real keys nearly always do."""
    classes = [f for f in (str.isdigit, str.islower, str.isupper) if any(f(c) for c in alphabet)]
    while True:
        s = "".join(_RNG.choice(alphabet) for _ in range(n))
        if alphabet is HEX or all(any(f(c) for c in s) for f in classes):
            return s


def pem(label: str) -> str:
    body = "\n".join(rnd(B64, 64) for _ in range(6))
    return f"-----BEGIN {label}-----\n{body}\n{rnd(B64, 20)}==\n-----END {label}-----"


def jwt() -> str:
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
    payload = base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"Ada","iat":1516239022}')
    return f"{header}.{payload.rstrip(b'=').decode()}.{rnd(B64URL, 43)}"


# (text containing the secret, the secret itself, expected kind)
SECRETS: list[tuple[str, str, str]] = []


def add(template: str, secret: str, kind: str) -> None:
    SECRETS.append((template.format(s=secret), secret, kind))


add("OPENAI_API_KEY={s}", "sk-" + rnd(ALNUM, 48), "openai_key")
add("client = OpenAI(api_key='{s}')", "sk-proj-" + rnd(B64URL, 156), "openai_key")
add("key: {s}", "sk-svcacct-" + rnd(B64URL, 120), "openai_key")
add('export ANTHROPIC_API_KEY="{s}"', "sk-ant-api03-" + rnd(B64URL, 93) + "AA", "anthropic_key")
add("admin key {s} rotated", "sk-ant-admin01-" + rnd(B64URL, 93) + "AA", "anthropic_key")
for prefix in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"):
    add("git clone https://x:{s}@github.com/o/r.git", prefix + rnd(ALNUM, 36), "github_token")
add("GH_TOKEN={s}", "github_pat_" + rnd(ALNUM, 22) + "_" + rnd(ALNUM, 59), "github_token")
add("gitlab token {s}", "glpat-" + rnd(B64URL, 20), "gitlab_token")
add("aws_access_key_id = {s}", "AKIA" + rnd(string.ascii_uppercase + string.digits, 16), "aws_access_key")
add("creds: {s}", "ASIA" + rnd(string.ascii_uppercase + string.digits, 16), "aws_access_key")
add("aws_secret_access_key = {s}", rnd(B64, 40), "aws_secret_key")
add('AWS_SECRET_ACCESS_KEY="{s}"', rnd(B64, 40), "aws_secret_key")
add("const maps = '{s}';", "AIza" + rnd(B64URL, 35), "google_api_key")
add(
    "SLACK_BOT={s}",
    "xoxb-" + rnd(string.digits, 12) + "-" + rnd(string.digits, 13) + "-" + rnd(ALNUM, 24),
    "slack_token",
)
add(
    "user token {s}",
    "xoxp-" + rnd(string.digits, 12) + "-" + rnd(string.digits, 12) + "-" + rnd(HEX, 32),
    "slack_token",
)
add("app token {s}", "xapp-1-A" + rnd(ALNUM, 10) + "-" + rnd(string.digits, 13) + "-" + rnd(HEX, 64), "slack_token")
add(
    "post to {s} on deploy",
    "https://hooks.slack.com/services/T"
    + rnd(string.ascii_uppercase + string.digits, 8)
    + "/B"
    + rnd(string.ascii_uppercase + string.digits, 10)
    + "/"
    + rnd(ALNUM, 24),
    "slack_webhook",
)
add("stripe.api_key = {s}", "sk_live_" + rnd(ALNUM, 24), "stripe_key")
add("restricted {s}", "rk_live_" + rnd(ALNUM, 99), "stripe_key")
add("publishable: {s}", "pk_live_" + rnd(ALNUM, 99), "stripe_key")
for label in (
    "RSA PRIVATE KEY",
    "EC PRIVATE KEY",
    "OPENSSH PRIVATE KEY",
    "PRIVATE KEY",
    "ENCRYPTED PRIVATE KEY",
    "PGP PRIVATE KEY BLOCK",
):
    add("key file:\n{s}\nend", pem(label), "private_key")
add("Authorization header carried {s} yesterday", jwt(), "jwt")
add("NPM_TOKEN {s}", "npm_" + rnd(ALNUM, 36), "npm_token")
add("twilio {s}", "SK" + rnd(HEX, 32), "twilio_key")
add("sendgrid {s}", "SG." + rnd(B64URL, 22) + "." + rnd(B64URL, 43), "sendgrid_key")
add("DATABASE_URL=postgres://app:{s}@db.internal:5432/prod", "Xk29vLq0pA", "connection_string")
add("mysql://root:{s}@127.0.0.1/shop", "s3cr3t!Pw", "connection_string")
add("mongodb+srv://admin:{s}@cluster0.ab1cd.mongodb.net/test", rnd(ALNUM, 16), "connection_string")
add("REDIS_URL=redis://:{s}@cache:6379/0", rnd(ALNUM, 20), "connection_string")
add("amqp://guest:{s}@rabbit:5672/", "Gu3st-2024", "connection_string")
add('password = "{s}"', "hunter2-Blue", "password_assignment")
add("db:\n  passwd: {s}\n  host: x", "Tr0ub4dor&3", "password_assignment")
add("DB_PASSWORD={s}\nDEBUG=1", "correcthorse", "password_assignment")
add('{{"api_key": "{s}", "region": "eu"}}', rnd(ALNUM, 32), "password_assignment")
add("const clientSecret = '{s}';", rnd(ALNUM, 30), "password_assignment")
add('cfg := Config{{Password: "{s}"}}', "P4ssw0rd-prod", "password_assignment")
add("//registry.npmjs.org/:_authToken={s}", str(uuid.UUID(int=_RNG.getrandbits(128))), "password_assignment")
add("curl -H 'Authorization: Bearer {s}' https://api", rnd(ALNUM, 40), "auth_header")
add("the staging key is {s} (rotate monthly)", rnd(B64, 40), "high_entropy")
add('api_token: str = "{s}"', rnd(ALNUM, 24), "password_assignment")


def b64_blob(n: int) -> str:
    return base64.b64encode(_RNG.randbytes(n)).decode()


_SHA = hashlib.sha1(b"engram").hexdigest()
_SHA256 = hashlib.sha256(b"engram").hexdigest()
_SHA512_B64 = base64.b64encode(hashlib.sha512(b"engram").digest()).decode()
_SHA384_B64 = base64.b64encode(hashlib.sha384(b"engram").digest()).decode()
_H1 = base64.b64encode(hashlib.sha256(b"go").digest()).decode()

NOT_SECRETS: list[str] = [
    f"commit {_SHA}\nAuthor: Ada <ada@example.com>",
    f"fixed in {_SHA[:7]} and {_SHA[:12]}",
    f"request id {uuid.UUID(int=_RNG.getrandbits(128))}",
    f"ID={str(uuid.UUID(int=_RNG.getrandbits(128))).upper()}",
    f'<img src="data:image/png;base64,iVBORw0KGgo{b64_blob(1500)}">',
    f"logo: iVBORw0KGgoAAAANSUhEUgAA{b64_blob(300)}",
    f"background: url(data:font/woff2;base64,{b64_blob(900)}) format('woff2');",
    f'"integrity": "sha512-{_SHA512_B64}",',
    f'  resolved "https://registry.yarnpkg.com/left-pad/-/left-pad-1.3.0.tgz#{_SHA}"\n  integrity sha512-{_SHA512_B64}',
    f'{{file = "requests-2.31.0-py3-none-any.whl", hash = "sha256:{_SHA256}"}},',
    f'name = "serde"\nversion = "1.0.197"\nchecksum = "{_SHA256}"',
    f"github.com/pkg/errors v0.9.1 h1:{_H1}",
    f"image: ghcr.io/acme/api@sha256:{_SHA256}",
    f"Digest: sha256:{_SHA256}",
    f"requests==2.31.0 --hash=sha256:{_SHA256}",
    f'<script src="x.js" integrity="sha384-{_SHA384_B64}" crossorigin="anonymous"></script>',
    f'  "hash": "{hashlib.sha512(b"x").hexdigest()}",',
    f'src = fetchurl {{ url = "x"; hash = "sha256-{_H1}"; }};',
    f"Change-Id: I{_SHA}",
    "def get_user_account_settings_for_project_identifier(project_id: int) -> dict: ...",
    "const isAuthenticatedUserAllowedToAccessResource2FA = checkPermissions(user, resource);",
    "MAX_RETRY_ATTEMPTS_BEFORE_CIRCUIT_BREAKER_OPENS_123 = 5",
    "import com.example.service.authentication.TokenValidatorFactoryImpl2;",
    "see https://github.com/anthropics/claude-code/blob/main/src/services/tokenCounterV2.ts",
    "https://example.com/search?q=rotate%20keys&page=2&sort=desc",
    "git remote add origin git@github.com:owner/repo-name.git",
    "/usr/local/lib/python3.11/site-packages/tokenizers/implementations/byte_level_bpe.py",
    r"C:\Users\Ada\AppData\Local\Engram\projects\3f2a9c\memory.sqlite3",
    "bumped from 1.2.3-beta.4+build.567 to 2.0.0-rc.1",
    ".btn { color: #1a2b3c; background: #FFF; border-color: #00ff00aa; }",
    "password = getpass()",
    'token = os.environ["X"]',
    "      - run: deploy\n        env:\n          secret: ${{ secrets.FOO }}",
    'password = os.getenv("DB_PASSWORD")',
    "max_tokens = 4096",
    "password_hash = bcrypt.hashpw(password, salt)",
    'label = "Enter your password"',
    "DATABASE_URL=postgres://app@localhost/db",
    "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/prod",
    "token: string;\nsecret: Secret;\npassword?: string;",
    "secret = secrets.token_hex(32)",
    "api_key: str = Field(default=None)",
    "if password == expected_password_value:\n    return True",
    "pip install scikit-learn  # sk-learn-pipeline-configuration-options",
    "how-to-rotate-api-keys-in-production-2024-guide",
    "tokenizer = Tokenizer.from_file(path)",
    "password: {{ vault_db_password }}",
    "ARG NPM_TOKEN\nRUN echo $NPM_TOKEN",
    "valueFrom:\n  secretKeyRef:\n    name: db-secret\n    key: password",
    "pwd = os.getcwd()",
    "compass = 'North1234'",
    "password=[REDACTED:password_assignment]",
    "x = torch.nn.functional.scaled_dot_product_attention(queryStates, keyStates2)",
    "sha512:" + hashlib.sha512(b"y").hexdigest(),
]


@pytest.mark.parametrize(("text", "secret", "kind"), SECRETS, ids=[f"{i}-{k}" for i, (_, _, k) in enumerate(SECRETS)])
def test_known_formats_are_caught(text: str, secret: str, kind: str) -> None:
    findings = scan(text)
    assert [f.kind for f in findings] == [kind]
    found = text[findings[0].start : findings[0].end]
    assert secret in found or found in secret
    assert contains_secret(text)


def test_corpus_sizes() -> None:
    assert len(SECRETS) >= 35
    assert len(NOT_SECRETS) >= 35


@pytest.mark.parametrize("text", NOT_SECRETS, ids=range(len(NOT_SECRETS)))
def test_look_alikes_are_not_flagged(text: str) -> None:
    assert scan(text) == []
    assert not contains_secret(text)


@pytest.mark.parametrize(("text", "secret", "kind"), SECRETS, ids=[f"{i}-{k}" for i, (_, _, k) in enumerate(SECRETS)])
def test_redaction_removes_secret(text: str, secret: str, kind: str) -> None:
    out, findings = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert findings == scan(text)
    assert redact(out) == (out, [])  # redacting twice changes nothing


def test_redaction_keeps_useful_context() -> None:
    out, _ = redact("DATABASE_URL=postgres://app:Xk29vLq0pA@db.internal:5432/prod")
    assert out == "DATABASE_URL=postgres://app:[REDACTED:connection_string]@db.internal:5432/prod"
    out, _ = redact('password = "hunter2-Blue"  # staging')
    assert out == 'password = "[REDACTED:password_assignment]"  # staging'
    out, _ = redact("db:\n  passwd: Tr0ub4dor&3\n  host: x")
    assert out == "db:\n  passwd: [REDACTED:password_assignment]\n  host: x"
    key = "sk-" + rnd(ALNUM, 48)
    out, _ = redact(f"OPENAI_API_KEY={key}")
    assert out == "OPENAI_API_KEY=[REDACTED:openai_key]"


def test_findings_sorted_and_non_overlapping() -> None:
    text = "\n".join(t for t, _, _ in SECRETS)
    findings = scan(text)
    assert len(findings) == len(SECRETS)
    assert all(isinstance(f, SecretFinding) for f in findings)
    for a, b in itertools.pairwise(findings):
        assert a.end <= b.start
    out, _ = redact(text)
    for _, secret, _ in SECRETS:
        assert secret not in out


def test_entropy_recall_on_random_tokens() -> None:
    tokens = [rnd(_RNG.choice([ALNUM, B64, B64URL]), _RNG.randint(32, 64)) for _ in range(300)]
    caught = sum(contains_secret(f"value {t} here") for t in tokens)
    assert caught / len(tokens) >= 0.95


def test_entropy_ignores_hex_and_lowercase_ids() -> None:
    for _ in range(200):
        assert not contains_secret(f"id {rnd(HEX, _RNG.choice([32, 40, 64, 128]))} end")
        assert not contains_secret(f"id {rnd(string.ascii_lowercase + string.digits, 40)} end")


def test_surrogate_escaped_text_does_not_crash() -> None:
    raw = b"password = 'hunter2-Blue' \xff\xfe caf\xc3 " + b"sk-" + rnd(ALNUM, 48).encode()
    text = raw.decode("utf-8", errors="surrogateescape")
    out, findings = redact(text)
    assert [f.kind for f in findings] == ["password_assignment", "openai_key"]
    assert "\udcff" in out
    assert scan("\ud800\udfff lone surrogates \udc80") == []


def test_empty_and_tiny_inputs() -> None:
    assert scan("") == []
    assert redact("") == ("", [])
    assert scan("a") == []


def _ordinary_code(size: int) -> str:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    chunks: list[str] = []
    total = 0
    for name in ("argparse.py", "json/decoder.py", "logging/__init__.py", "subprocess.py"):
        path = stdlib / name
        if path.exists():
            chunks.append(path.read_text(encoding="utf-8"))
            total += len(chunks[-1])
        if total >= size:
            break
    text = "\n".join(chunks)
    while len(text) < size:
        text += text
    return text[:size]


def _best_of(n: int, text: str) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        scan(text)
        best = min(best, time.perf_counter() - t0)
    return best


def test_fast_on_ordinary_code() -> None:
    text = _ordinary_code(100_000)
    assert scan(text) == []  # the stdlib holds no secrets: a precision check on real code
    assert _best_of(3, text) < 0.05


@pytest.mark.parametrize(
    "text",
    [
        "a" * 100_000,
        "-----BEGIN RSA PRIVATE KEY-----" + "A" * 100_000,
        "-----BEGIN RSA PRIVATE KEY-----\n" + ("A" * 64 + "\n") * 1500,
        "postgres://" + "u" * 50_000 + ":" + "p" * 50_000,
        "password = " * 10_000,
        "eyJ" + "a" * 50_000 + ".eyJ" + "b" * 50_000,
        "sk-" + "-" * 100_000,
        "x" + "/+" * 50_000,
        ("Ab1" * 20 + " ") * 2000,
    ],
    ids=range(9),
)
def test_no_catastrophic_backtracking(text: str) -> None:
    assert _best_of(1, text) < 0.5


def test_truncated_and_json_escaped_private_keys() -> None:
    body = rnd(B64, 64)
    out, findings = redact(f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n{body[::-1]}")
    assert [f.kind for f in findings] == ["private_key"]
    assert body not in out and body[::-1] not in out
    escaped = '{"private_key": "-----BEGIN PRIVATE KEY-----\\n' + body + "\\n" + body[::-1] + '"}'
    out, findings = redact(escaped)
    assert findings and findings[0].kind == "private_key"
    assert body not in out and body[::-1] not in out


def test_word_boundary_required_for_prefixed_formats() -> None:
    # "sk_live_" inside "desk_live_...", "sk-" inside "task-...": not keys.
    assert [f.kind for f in scan(f"desk_live_{rnd(ALNUM, 24)}")] != ["stripe_key"]
    assert scan(f"task-{rnd(string.ascii_lowercase, 20)}2") == []
    assert scan(f"xghp_{rnd(ALNUM, 36)}".lower()) == []
