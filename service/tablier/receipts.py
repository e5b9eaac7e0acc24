"""Signed receipts (Ed25519, `cryptography`): the server's word, outside the database, on how far
a match's log reached.

Every CreateGame, JoinGame, PlayMove and HostCommand answer carries a `Receipt`: the server's
signature over (game id, seq, chain head, time). A client that keeps it can later prove that a
log served or stored is shorter than, or different from, what the server once acknowledged
(`tablier verify --receipts`, `tablier verify-public --receipts`), which the database alone
cannot: someone who rewrites the database cannot sign.

    message   = "tablier/receipt\\0" || u32be(len(game id)) || game id || u64be(seq)
                || u32be(len(chain head)) || chain head || i64be(signed_at_ms)
    signature = Ed25519(signing key, message)
    key_id    = hex(SHA-256("tablier/signing-key\\0" || raw public key))[:16]

The signing key is configured like the seed key (`tablier.seeds`), never stored in the database:

* ``TABLIER_SIGNING_KEY``: the current private key (64 hex digits, the 32-byte Ed25519 seed);
* ``TABLIER_SIGNING_OLD_KEYS``: comma-separated public keys (64 hex digits) of earlier keys,
  still listed (ListSigningKeys) so that receipts they signed keep verifying;
* neither set: ``<data dir>/signing.key``, generated on first use with owner-only permissions.

Rotation: put the new key in TABLIER_SIGNING_KEY and the old one's public key in
TABLIER_SIGNING_OLD_KEYS. A client that kept a public key can verify receipts it signed even
after the server stops listing it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import struct
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from tablier.seeds import SeedKeyError, read_or_make_key_file
from tablier.v1 import service_pb2

KEY_FILE = "signing.key"


def key_id(public: bytes) -> str:
    return hashlib.sha256(b"tablier/signing-key\0" + public).hexdigest()[:16]


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def message(game_id: str, seq: int, chain_head: bytes, signed_at_ms: int) -> bytes:
    """The bytes a receipt's signature covers (module docstring; docs/verifying.md)."""
    gid = game_id.encode()
    return (
        b"tablier/receipt\0"
        + struct.pack(">I", len(gid))
        + gid
        + struct.pack(">Q", seq)
        + struct.pack(">I", len(chain_head))
        + chain_head
        + struct.pack(">q", signed_at_ms)
    )


def _hex32(text: str, what: str) -> bytes:
    try:
        raw = bytes.fromhex(text.strip())
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise SeedKeyError(f"{what} must be 64 hex digits (32 bytes)")
    return raw


@dataclass(frozen=True)
class SigningKeys:
    """The current signing key and the public keys of earlier ones (listed, never used to sign)."""

    current: Ed25519PrivateKey
    old: tuple[bytes, ...] = ()

    @functools.cached_property
    def public(self) -> bytes:
        return raw_public(self.current.public_key())

    @functools.cached_property
    def current_id(self) -> str:
        return key_id(self.public)

    def listed(self) -> dict[str, bytes]:
        """key id -> raw public key, the current key first."""
        out = {self.current_id: self.public}
        for pub in self.old:
            out.setdefault(key_id(pub), pub)
        return out

    def sign(self, game_id: str, seq: int, chain_head: bytes, signed_at_ms: int | None = None) -> service_pb2.Receipt:
        receipt = service_pb2.Receipt()
        self.sign_into(receipt, game_id, seq, chain_head, signed_at_ms)
        return receipt

    def sign_into(
        self, out: service_pb2.Receipt, game_id: str, seq: int, chain_head: bytes, signed_at_ms: int | None = None
    ) -> None:
        """As `sign`, into a message a response already holds (no copy)."""
        at = int(time.time() * 1000) if signed_at_ms is None else signed_at_ms
        out.game_id = game_id
        out.seq = seq
        out.chain_head = chain_head
        out.signed_at_ms = at
        out.key_id = self.current_id
        out.signature = self.current.sign(message(game_id, seq, chain_head, at))

    @classmethod
    def from_env(cls, data_dir: Path | str, env: Mapping[str, str] | None = None) -> SigningKeys:
        env = os.environ if env is None else env
        old = tuple(
            _hex32(k, "TABLIER_SIGNING_OLD_KEYS")
            for k in env.get("TABLIER_SIGNING_OLD_KEYS", "").split(",")
            if k.strip()
        )
        text = env.get("TABLIER_SIGNING_KEY", "")
        if not text.strip():
            path = Path(data_dir) / KEY_FILE
            text, what = read_or_make_key_file(path), str(path)
        else:
            what = "TABLIER_SIGNING_KEY"
        return cls(Ed25519PrivateKey.from_private_bytes(_hex32(text, what)), old)


def check(receipt: service_pb2.Receipt, keys: Mapping[str, bytes]) -> str | None:
    """None when `receipt` is signed by one of `keys` (key id -> raw public key), else why not."""
    public = keys.get(receipt.key_id)
    if public is None:
        return f"receipt signed with key {receipt.key_id!r}, which is not among the trusted keys"
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(
            receipt.signature, message(receipt.game_id, receipt.seq, receipt.chain_head, receipt.signed_at_ms)
        )
    except (InvalidSignature, ValueError):
        return f"receipt for seq {receipt.seq}: the signature does not verify"
    return None


def check_log(
    game_id: str, chains: Mapping[int, bytes], receipts: Iterable[service_pb2.Receipt], keys: Mapping[str, bytes]
) -> list[str]:
    """What the valid receipts of match `game_id` vouch for that the log (`chains`: seq -> chain
    hash) does not hold: a log cut before a receipt's seq, or another event at it."""
    problems = []
    last = max(chains, default=0)
    for i, r in enumerate(receipts, start=1):
        if r.game_id != game_id:
            continue
        why = check(r, keys)
        if why is not None:
            problems.append(f"receipt {i}: {why}")
            continue
        if r.seq == 0:
            continue
        if r.seq not in chains:
            problems.append(f"seq {r.seq}: receipt {i} was signed there; the log ends at seq {last} (cut)")
        elif chains[r.seq] != r.chain_head:
            problems.append(f"seq {r.seq}: receipt {i} signed another chain head there (rewritten)")
    return problems


def read_receipts(path: Path | str) -> list[service_pb2.Receipt]:
    """Receipts kept in a file: a `ReceiptList` as protobuf JSON (as the SDK writes it)."""
    from google.protobuf import json_format

    kept = service_pb2.ReceiptList()
    json_format.Parse(Path(path).read_text(), kept)
    return list(kept.receipts)


def parse_public_keys(texts: Iterable[str]) -> dict[str, bytes]:
    """Trusted public keys given as hex (`--receipt-key`), by key id."""
    out = {}
    for text in texts:
        pub = _hex32(text, "a receipt key")
        out[key_id(pub)] = pub
    return out
