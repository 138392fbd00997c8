"""Privacy: secret scanning and redaction applied before anything is stored or sent."""

from desktop.memory.privacy.secrets import SecretFinding, contains_secret, redact, scan

__all__ = ["SecretFinding", "contains_secret", "redact", "scan"]
