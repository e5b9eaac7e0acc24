"""Signed receipts (Ed25519, `cryptography`): the server's word, outside the database, on how far
a match's log reached.

Every CreateGame, JoinGame, PlayMove and HostCommand answer carries a `Receipt`: the server's
signature over (game id, seq, chain head, time). A client that keeps it can later prove that a
log served or stored is shorter than, or different from, what the server once acknowledged
(`tablier verify --receipts`, `tablier verify-public --receipts`), which the database alone
cannot: someone who rewrites the database cannot sign.

    message   = "tablier/receipt\\0" || u32be(len(game id)) || game id || u64be(seq)
                || u32be(len(chain head)) || chain head || i64be(signed_at_ms)
    signature = Ed25519(signing key, message)                       (batch_size 0: alone)
              = Ed25519(signing key, "tablier/receipt-batch\\0" || u32be(batch_size) || root)
                root: the RFC 6962 tree hash of the messages of the batch, in order
                (leaf SHA-256(0x00 || message), node SHA-256(0x01 || left || right)); the
                receipt's batch_path leads from its leaf at batch_index to it
    key_id    = hex(SHA-256("tablier/signing-key\\0" || raw public key))[:16]

The answers completed in one turn of the event loop (the moves of one group commit, mostly)
are signed together (`BatchSigner`): one Ed25519 signature for up to 64 receipts instead of
one each, its cost shared.

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

import asyncio
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
from tablier.witness import Tree, leaf_hash, root_of

KEY_FILE = "signing.key"
BATCH_PREFIX = b"tablier/receipt-batch\0"
# Receipts one signature covers at most: a batch_path of at most 6 hashes.
BATCH_MAX = 64


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


def batch_message(size: int, root: bytes) -> bytes:
    """The bytes the signature of a batch of `size` receipts covers (module docstring)."""
    return BATCH_PREFIX + struct.pack(">I", size) + root


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

    def sign_batch(
        self, batch: list[tuple[service_pb2.Receipt, str, int, bytes]], signed_at_ms: int | None = None
    ) -> None:
        """Signs the receipts (out, game id, seq, chain head) of `batch` (at most BATCH_MAX), in
        place, with one signature: over the root of their tree, each receipt with its path to
        it; a batch of one is signed alone, as `sign_into` does."""
        if len(batch) == 1:
            self.sign_into(*batch[0], signed_at_ms)
            return
        if not 1 < len(batch) <= BATCH_MAX:
            raise ValueError(f"a batch holds 2 to {BATCH_MAX} receipts, not {len(batch)}")
        at = int(time.time() * 1000) if signed_at_ms is None else signed_at_ms
        tree = Tree()
        for _, game_id, seq, chain_head in batch:
            tree.append(leaf_hash(message(game_id, seq, chain_head, at)))
        signature = self.current.sign(batch_message(len(batch), tree.root()))
        for index, (out, game_id, seq, chain_head) in enumerate(batch):
            out.game_id = game_id
            out.seq = seq
            out.chain_head = chain_head
            out.signed_at_ms = at
            out.key_id = self.current_id
            out.signature = signature
            out.batch_size = len(batch)
            out.batch_index = index
            out.batch_path.extend(tree.path(index))

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


class BatchSigner:
    """Signs the receipts asked for in one turn of the event loop together (`sign_batch`): the
    answers a group commit completes resume in the same turn, so they share one signature.
    A receipt asked for waits at most until the end of that turn."""

    def __init__(self, keys: SigningKeys) -> None:
        self.keys = keys
        self._pending: list[tuple[service_pb2.Receipt, str, int, bytes, asyncio.Future[None]]] = []

    async def sign_into(self, out: service_pb2.Receipt, game_id: str, seq: int, chain_head: bytes) -> None:
        """As `SigningKeys.sign_into`, once the turn's receipts are signed."""
        loop = asyncio.get_running_loop()
        signed: asyncio.Future[None] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._sign_pending)
        self._pending.append((out, game_id, seq, chain_head, signed))
        await signed

    def _sign_pending(self) -> None:
        pending, self._pending = self._pending, []
        # An answer abandoned meanwhile (its call cancelled) needs no receipt.
        pending = [p for p in pending if not p[4].done()]
        for start in range(0, len(pending), BATCH_MAX):
            batch = pending[start : start + BATCH_MAX]
            try:
                self.keys.sign_batch([(out, g, s, h) for out, g, s, h, _ in batch])
            except Exception as exc:
                for *_, signed in batch:
                    signed.set_exception(exc)
            else:
                for *_, signed in batch:
                    signed.set_result(None)


def signed_message(receipt: service_pb2.Receipt) -> bytes | None:
    """What the receipt's signature covers: its message, or its batch's (the root its path leads
    to); None when its batch fields do not fit together."""
    own = message(receipt.game_id, receipt.seq, receipt.chain_head, receipt.signed_at_ms)
    if receipt.batch_size == 0:
        return None if receipt.batch_index or receipt.batch_path else own
    if receipt.batch_size == 1 or receipt.batch_size > BATCH_MAX:
        return None
    root = root_of(receipt.batch_index, receipt.batch_size, leaf_hash(own), receipt.batch_path)
    return None if root is None else batch_message(receipt.batch_size, root)


def check(receipt: service_pb2.Receipt, keys: Mapping[str, bytes]) -> str | None:
    """None when `receipt` is signed by one of `keys` (key id -> raw public key), else why not."""
    public = keys.get(receipt.key_id)
    if public is None:
        return f"receipt signed with key {receipt.key_id!r}, which is not among the trusted keys"
    signed = signed_message(receipt)
    if signed is None:
        return (
            f"receipt for seq {receipt.seq}: its batch path does not fit batch_index {receipt.batch_index} "
            f"of batch_size {receipt.batch_size}"
        )
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(receipt.signature, signed)
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
