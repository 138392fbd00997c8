"""New detectors (issue 14): secrets in prose, split/spaced keys, PEM bodies; look-alikes stay clean."""

from __future__ import annotations

import random
import string

import pytest

from desktop.memory.privacy.secrets import redact, scan
from tests.privacy.test_secrets import NOT_SECRETS

_RNG = random.Random(1414)


def _rnd(alphabet: str, n: int) -> str:
    while True:
        s = "".join(_RNG.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


UP = string.ascii_uppercase + string.digits
AL = string.ascii_letters + string.digits
AWS = "AKIA" + _rnd(UP, 16)
GHP = "ghp_" + _rnd(AL, 36)
PW = "Zq8r" + _rnd(AL, 10)
PEM_BODY = "MII" + _rnd(AL + "+/", 61) + "\n" + "\n".join(_rnd(AL + "+/", 64) for _ in range(5)) + "\nAbCd==\n"

CAUGHT = [
    (f"the production database password is {PW}, do not share it", PW),
    (f"FYI the api key for staging is {PW}.", PW),
    (f"token: {PW}", PW),
    (f"key split over lines: {AWS[:10]}\n{AWS[10:]} end", AWS[12:]),
    (f"spaced: {' '.join(AWS[i:i + 4] for i in range(0, 20, 4))}", AWS[-4:]),
    (f'github = "{GHP[:20]}" +\n  "{GHP[20:]}"', GHP[-8:]),
    (f"here is the key body\n{PEM_BODY}that was it", PEM_BODY[10:30]),
]

LOOK_ALIKES = [
    "the password is required for every login",
    "the token is expired, ask for a new one",
    "the password is stored in the vault, never in git",
    "set the api key to your own value",
    "AKIA is the prefix of AWS access keys and ASIA of temporary ones",
    "ghp_ tokens are personal access tokens on GitHub, gho_ are OAuth tokens",
    "the secret is out: we ship on Friday",
    "the key is TokenValidatorFactory in auth.py",
    "the access key is rotated every 90 days",
    "token: 4096 max per request",
    "our release key is v1.2.3",
    "the password is the same as for staging",
    "-----BEGIN CERTIFICATE-----\n" + PEM_BODY + "-----END CERTIFICATE-----",
    "credentials: see the README section on setup.",
    "The password is 'hunter' and that's a joke from bash.org",
]


@pytest.mark.parametrize(("text", "part"), CAUGHT, ids=range(len(CAUGHT)))
def test_new_forms_are_caught_and_redacted(text: str, part: str) -> None:
    out, found = redact(text)
    assert found, text
    assert part not in out


@pytest.mark.parametrize("text", LOOK_ALIKES + NOT_SECRETS, ids=range(len(LOOK_ALIKES) + len(NOT_SECRETS)))
def test_look_alikes_stay_clean(text: str) -> None:
    assert scan(text) == [], scan(text)


def test_quick_gate_lets_every_known_secret_through() -> None:
    from desktop.memory.privacy.secrets import might_contain_secret
    from tests.privacy.test_secrets import SECRETS

    for text in [t for t, _, _ in SECRETS] + [t for t, _ in CAUGHT]:
        assert might_contain_secret(text), text
