"""Issue 17: the scanner's triggers skip work, never a secret; the boundary's joined pass equals value by value."""

from __future__ import annotations

import random
import string

from desktop.memory.privacy import boundary, triggers
from desktop.memory.privacy.secrets import _scan, might_contain_secret, scan
from tests.privacy.test_secrets import NOT_SECRETS, SECRETS
from tests.security.test_detectors import CAUGHT, LOOK_ALIKES

_RNG = random.Random(1717)
_SECRET_TEXTS = [t for t, _, _ in SECRETS] + [t for t, _ in CAUGHT]
_CORPUS = _SECRET_TEXTS + LOOK_ALIKES + list(NOT_SECRETS)
# Pieces that sit next to secrets in real text, and code that has none.
_FRAGMENTS = [
    "password = ", "token: ", "api_key=", "SECRET_KEY = '", "Authorization: Bearer ", "AKIA", "ghp_", "://user:",
    "@host", "sk-", "xox", "MII", "-----BEGIN RSA PRIVATE KEY-----\n", "\n", " is ", "pin code is ", "passcode: ",
    "\t", '"', "'", "=", ":", "def keys(self):\n    return self._keys\n", "for token in tokenize(line):\n",
    '["file:lib/a.py","sym:lib/a.py:Key.get"]', "credentials", "aws_secret_access_key", "hooks.slack.com/",
    "sk_live_", "npm_", "eyJ", "SG.", "SK", "İ", "é", "K",
]


def _token() -> str:
    alphabet = string.ascii_letters + string.digits + "+/_-"
    return "".join(_RNG.choice(alphabet) for _ in range(_RNG.randint(5, 60)))


def _texts(n: int) -> list[str]:
    out = []
    for _ in range(n):
        parts = [_RNG.choice(_FRAGMENTS + _CORPUS) if _RNG.random() < 0.7 else _token()
                 for _ in range(_RNG.randint(1, 8))]
        text = "".join(parts)
        out += [text, text.upper(), text.lower()]
    return out


def test_triggered_scan_finds_exactly_what_every_rule_finds() -> None:
    """The gates only skip rules that cannot match: same findings as running every rule, secrets or not."""
    for text in _CORPUS + _texts(700):
        assert scan(text) == _scan(text, gated=False), text


def test_every_corpus_secret_fires_a_trigger() -> None:
    for text in _SECRET_TEXTS:
        assert text.isascii() and triggers.ascii_gate(text, text.lower()), text
        assert any(True for _ in triggers.gate_spans(text, text.lower())), text


def test_the_gate_is_monotone_so_joined_values_can_be_tested_together() -> None:
    """A text that fires a trigger still fires it with anything around it (NUL-joined, as the boundary does)."""
    for text in _texts(300):
        if not text.isascii() or not might_contain_secret(text):
            continue
        padded = "\0".join(["x" * _RNG.randint(0, 40), text, _token()])
        assert might_contain_secret(padded), text


def test_code_without_secrets_fires_nothing() -> None:
    for text in ["def keys(self):\n    return sorted(self._keys)\n", "import tokenize\nfor tok in tokens: pass\n",
                 '["file:lib/email/_header_value_parser.py","sym:lib/email/_header_value_parser.py:get_token"]',
                 "lib/concurrent/futures/process.py", "class PasswordManager:\n    pass\n"]:
        assert not might_contain_secret(text), text


def test_boundary_redacts_joined_values_exactly_like_one_by_one() -> None:
    plain = ["file:lib/a.py", "verified", "", "{}", "x" * 600, "sym:lib/keys.py:Key.get", "naïve café", "AKIA"]
    for _ in range(300):
        values: list[object] = [_RNG.choice(plain + _SECRET_TEXTS + _texts(1)) for _ in range(_RNG.randint(1, 30))]
        values += [None, 7, 1.5, b"bytes AKIAIOSFODNN7EXAMPLE"]
        _RNG.shuffle(values)
        boundary._clean.clear() if _RNG.random() < 0.3 else None
        assert boundary.redact_values(values) == [boundary.redact_param(v) for v in values]


def test_boundary_never_remembers_a_secret_as_clean() -> None:
    aws = "AKIA" + "".join(_RNG.choice(string.ascii_uppercase + string.digits) for _ in range(16))
    out = boundary.redact_values([f"key={aws}", aws, "plain"])
    assert aws not in "".join(out)
    assert aws not in boundary._clean and f"key={aws}" not in boundary._clean
    assert boundary.redact_values([aws]) != [aws]  # asked again: still redacted


def test_json_lists_of_quiet_items_are_quiet_and_nothing_else_is() -> None:
    """Closure paths (JSON lists of node ids already gated) skip the gate; a list with a secret never does."""
    ids = ["file:lib/a.py", "sym:lib/a.py:Key.get", "file:lib/tokenize.py"]
    boundary.redact_values(ids)  # bound first, as graph nodes are
    path = '["' + '","'.join(ids) + '"]'
    assert boundary._quiet_list(path)
    aws = "AKIA" + "".join(_RNG.choice(string.ascii_uppercase + string.digits) for _ in range(16))
    for text in ['["' + ids[0] + '","' + aws + '"]', '["key","=' + aws + '"]', '["a\\\\"b"]', '["' + ids[0] + '"',
                 '["token",": hunter2hunter2"]']:
        assert not boundary._quiet_list(text), text
        assert boundary.redact_values([text]) == [boundary.redact_param(text)]
    assert aws not in boundary.redact_values(['["' + ids[0] + '","' + aws + '"]'])[0]


def test_a_large_statement_is_gated_in_bounded_slices_with_the_same_result() -> None:
    # A 10,000-row import binds megabytes: the joined pass runs in slices (each regex scan holds
    # the GIL), and a secret on either side of a slice boundary is still found.
    filler = ["".join(_RNG.choice(string.ascii_lowercase + " ") for _ in range(300)) for _ in range(600)]
    secrets = [s for s in _SECRET_TEXTS if s.isascii()][:20]
    values = [v for pair in zip(filler, [*secrets * 30][:600], strict=True) for v in pair]
    assert sum(len(v) + 1 for v in values) > 3 * boundary._JOIN_MAX_CHARS
    boundary._clean.clear()
    boundary._quiet.clear()
    assert boundary.redact_values(values) == [boundary.redact_param(v) for v in values]
