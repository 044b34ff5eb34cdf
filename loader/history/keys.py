"""The history key: its fingerprint, and the data key it unlocks.

Keyed digests are made under a random data key drawn when the history starts. The head keeps the
data key wrapped under the history key (XOR with an HMAC-derived pad bound to the lineage) and a
fingerprint of the history key, so a wrong key is recognised before any digest is compared, and
`rekey` moves a history to a new key by re-wrapping the data key: no digest needs its value again.
(Rotating a key that leaked together with the files needs `loader history reset` and a baseline:
the old key still unwraps the data key of the old head.)
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

DATA_KEY_BYTES = 32
SANDBOX_KEY = b"loader built-in sandbox history key: not a secret, the sandbox holds no real person"


def fingerprint(history_key: bytes, lineage: str) -> str:
    """A short public mark of `history_key` for the history `lineage`; it reveals nothing of the key."""
    return hmac.new(history_key, b"fingerprint\x1f" + lineage.encode(), hashlib.sha256).hexdigest()[:16]


def new_data_key() -> bytes:
    return secrets.token_bytes(DATA_KEY_BYTES)


def wrap(data_key: bytes, history_key: bytes, lineage: str) -> str:
    """The data key as the head keeps it (hex), readable only with `history_key`."""
    return bytes(a ^ b for a, b in zip(data_key, _pad(history_key, lineage), strict=True)).hex()


def unwrap(wrapped: str, history_key: bytes, lineage: str) -> bytes:
    """The data key from its wrapped form (check the fingerprint first: a wrong key gives noise)."""
    return bytes(a ^ b for a, b in zip(bytes.fromhex(wrapped), _pad(history_key, lineage), strict=True))


def _pad(history_key: bytes, lineage: str) -> bytes:
    return hmac.new(history_key, b"data key\x1f" + lineage.encode(), hashlib.sha256).digest()
