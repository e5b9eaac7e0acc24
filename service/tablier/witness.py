"""A witness of match heads outside the database: a chain of signed checkpoints, each with the
Merkle root (RFC 6962) of every match's latest head, in the style of a transparency log.

Every few seconds a server appends one checkpoint to the witness, a store other than the match
database (`tablier.witness_backends`: an append-only file, by default; a table in another
PostgreSQL database; an S3 bucket). Checkpoint n names the heads (game id, seq, chain hash) of
the matches whose log moved since checkpoint n-1 (its `changes`) and signs, with the receipt key
(`tablier.receipts`), the root of the tree of every match's latest head after them, the tree's
size and the hash of checkpoint n-1. Positions are taken with a compare-and-set (a line, a
primary key, an object written only if absent): servers sharing a database share one chain.

A server loading a match cold refuses it when its log ends before, or differs at, the latest
head a valid checkpoint names for it (DATA_LOSS with the seq); `tablier verify --witness`
checks the same offline, with the chain and the root; `tablier witness-proof` gives one match's
head with its inclusion proof, which a third party checks with SHA-256 and Ed25519 alone
(docs/verifying.md):

    leaf      = P(game id) || u64be(seq) || P(chain hash),   P(x) = u32be(len(x)) || x
    tree      = RFC 6962 Merkle tree hash over one leaf a match, in the order the chain first
                named them (within a checkpoint, by game id): leaf hash SHA-256(0x00 || leaf),
                node SHA-256(0x01 || left || right)
    message   = "tablier/checkpoint\\0" || u64be(index) || i64be(at_ms) || u64be(size) || root
                || prev || changes
                (index from 1; prev = SHA-256(message of checkpoint index-1), 32 zero bytes for
                the first; changes = tree hash of the leaves of the heads it names)
    signature = Ed25519(signing key, message)
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import struct
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

if TYPE_CHECKING:
    from tablier.receipts import SigningKeys
    from tablier.witness_backends import Backend

log = logging.getLogger(__name__)

Head = tuple[int, bytes]  # (seq, chain hash)
ZERO = bytes(32)
PREFIX = b"tablier/checkpoint\0"


# --------------------------------------------------------------------------- RFC 6962 tree


def _h(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def leaf(game_id: str, seq: int, chain: bytes) -> bytes:
    g = game_id.encode()
    return struct.pack(">I", len(g)) + g + struct.pack(">QI", seq, len(chain)) + chain


def leaf_hash(data: bytes) -> bytes:
    return _h(b"\x00" + data)


def tree_hash(hashes: Sequence[bytes]) -> bytes:
    """MTH over leaf hashes (RFC 6962 section 2.1); SHA-256 of nothing for no leaves."""
    tree = Tree()
    for h in hashes:
        tree.append(h)
    return tree.root()


def verify_inclusion(index: int, size: int, leaf_digest: bytes, path: Sequence[bytes], root: bytes) -> bool:
    """RFC 9162 section 2.1.3.2: does `path` prove the leaf hash at `index` in the tree `root`?"""
    return root_of(index, size, leaf_digest, path) == root


def root_of(index: int, size: int, leaf_digest: bytes, path: Sequence[bytes]) -> bytes | None:
    """The root `path` leads to from the leaf hash at `index` of a tree of `size` leaves (RFC 9162
    section 2.1.3.2), or None when the path does not fit such a tree."""
    if index >= size:
        return None
    fn, sn, r = index, size - 1, leaf_digest
    for p in path:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            r = _h(b"\x01" + p + r)
            while not fn & 1 and fn:
                fn >>= 1
                sn >>= 1
        else:
            r = _h(b"\x01" + r + p)
        fn >>= 1
        sn >>= 1
    return r if sn == 0 else None


class Tree:
    """Every match's latest head, one leaf a match, in the order the chain first named them
    (within one checkpoint, by game id). The levels are kept, so a changed or added leaf costs
    its path up (log n hashes), not the tree.

    Bottom-up pairing, an odd node at the end of a level promoted unchanged, gives the same
    tree as RFC 6962's left-full split."""

    def __init__(self) -> None:
        self.heads: dict[str, Head] = {}
        self.index: dict[str, int] = {}
        self._levels: list[list[bytes]] = [[]]

    def set(self, game_id: str, head: Head) -> None:
        self.heads[game_id] = head
        digest = leaf_hash(leaf(game_id, *head))
        at = self.index.get(game_id)
        if at is None:
            self.index[game_id] = len(self._levels[0])
            self.append(digest)
        else:
            self._levels[0][at] = digest
            self._up(at)

    def append(self, digest: bytes) -> None:
        self._levels[0].append(digest)
        self._up(len(self._levels[0]) - 1)

    def _up(self, i: int) -> None:
        k = 0
        while len(self._levels[k]) > 1:
            if k + 1 == len(self._levels):
                self._levels.append([])
            level, up = self._levels[k], self._levels[k + 1]
            j = i >> 1
            node = _h(b"\x01" + level[2 * j] + level[2 * j + 1]) if 2 * j + 1 < len(level) else level[2 * j]
            if j < len(up):
                up[j] = node
            else:
                up.append(node)
            i, k = j, k + 1

    def root(self) -> bytes:
        return self._levels[-1][0] if self._levels[0] else _h(b"")

    def copy(self) -> Tree:
        other = Tree()
        other.heads, other.index = dict(self.heads), dict(self.index)
        other._levels = [list(level) for level in self._levels]
        return other

    def proof(self, game_id: str) -> tuple[int, list[bytes]]:
        """The leaf's index and its audit path (RFC 6962 section 2.1.1), the nearest sibling first."""
        index = self.index[game_id]
        return index, self.path(index)

    def path(self, index: int) -> list[bytes]:
        """The audit path of the leaf at `index` (RFC 6962 section 2.1.1), the nearest sibling first."""
        path, i = [], index
        for level in self._levels[:-1]:
            if i ^ 1 < len(level):
                path.append(level[i ^ 1])
            i >>= 1
        return path


# --------------------------------------------------------------------------- checkpoints


@dataclass(frozen=True)
class Checkpoint:
    index: int
    at_ms: int
    size: int
    root: bytes
    prev: bytes
    changes: tuple[tuple[str, int, bytes], ...]  # (game id, seq, chain hash), by game id
    key_id: str
    signature: bytes = b""

    @property
    def changes_root(self) -> bytes:
        return tree_hash([leaf_hash(leaf(*c)) for c in self.changes])

    def message(self) -> bytes:
        return (
            PREFIX + struct.pack(">QqQ", self.index, self.at_ms, self.size) + self.root + self.prev + self.changes_root
        )

    def digest(self) -> bytes:
        """What the next checkpoint names as `prev`."""
        return _h(self.message())

    def record(self) -> bytes:
        return json.dumps(
            {
                "index": self.index,
                "at_ms": self.at_ms,
                "size": self.size,
                "root": self.root.hex(),
                "prev": self.prev.hex(),
                "changes": [[g, s, c.hex()] for g, s, c in self.changes],
                "key_id": self.key_id,
                "signature": self.signature.hex(),
            },
            separators=(",", ":"),
        ).encode()

    def public(self) -> dict[str, object]:
        """What a third party needs to check the signature (docs/verifying.md)."""
        return {
            "index": self.index,
            "at_ms": self.at_ms,
            "size": self.size,
            "root": self.root.hex(),
            "prev": self.prev.hex(),
            "changes_root": self.changes_root.hex(),
            "key_id": self.key_id,
            "signature": self.signature.hex(),
        }

    @classmethod
    def parse(cls, record: bytes) -> Checkpoint:
        """Raises ValueError for a record that is not a checkpoint."""
        try:
            doc = json.loads(record)
            changes = tuple(sorted((str(g), int(s), bytes.fromhex(c)) for g, s, c in doc["changes"]))
            cp = cls(
                int(doc["index"]),
                int(doc["at_ms"]),
                int(doc["size"]),
                bytes.fromhex(doc["root"]),
                bytes.fromhex(doc["prev"]),
                changes,
                str(doc["key_id"]),
                bytes.fromhex(doc["signature"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError("a record that is not a checkpoint") from exc
        if len(cp.root) != 32 or len(cp.prev) != 32:
            raise ValueError("a record that is not a checkpoint")
        return cp


def signed(cp: Checkpoint, keys: Mapping[str, bytes]) -> str | None:
    """None when `cp` is signed by one of `keys` (key id -> raw public key), else why not."""
    public = keys.get(cp.key_id)
    if public is None:
        return f"a checkpoint signed with key {cp.key_id!r}, which is not among the trusted keys"
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(cp.signature, cp.message())
    except (InvalidSignature, ValueError):
        return "a checkpoint whose signature does not verify"
    return None


@dataclass
class Chain:
    """What the checkpoints read so far prove: the latest head of each match (`tree`), the last
    valid checkpoint, and each record that is not a valid link of the chain (`problems`)."""

    keys: Mapping[str, bytes]
    position: int = 0
    last: Checkpoint | None = None
    tree: Tree = field(default_factory=Tree)
    problems: list[str] = field(default_factory=list)

    def add(self, position: int, record: bytes) -> str | None:
        """Takes the record at `position` (the next one); returns why it is refused, if it is."""
        self.position = position
        try:
            cp = Checkpoint.parse(record)
        except ValueError as exc:
            return self._refuse(position, str(exc))
        why = signed(cp, self.keys)
        if why is not None:
            return self._refuse(position, why)
        # Signed, so its heads are what a server saw: taken even where the chain is broken
        # around it (a record removed or changed before it), which is reported.
        expected = self.last.digest() if self.last is not None else ZERO
        if cp.index != position:
            why = self._refuse(position, f"a checkpoint numbered {cp.index} (moved, or one before it removed)")
        elif cp.prev != expected:
            why = self._refuse(position, "a checkpoint that does not follow the one before it (prev differs)")
        for gid, seq, chain in cp.changes:
            known = self.tree.heads.get(gid)
            if known is not None and known[0] > seq:
                self.problems.append(f"checkpoint {position}: {gid} goes back from seq {known[0]} to {seq}")
                continue
            self.tree.set(gid, (seq, chain))
        self.last = cp
        return why

    def _refuse(self, position: int, why: str) -> str:
        text = f"checkpoint {position}: {why}"
        self.problems.append(text)
        return text

    def check_root(self) -> str | None:
        """Whether the heads read hash to the root (and size) the last checkpoint signed."""
        if self.last is None:
            return None
        if self.last.size != len(self.tree.heads) or self.last.root != self.tree.root():
            return f"checkpoint {self.last.index}: its root is not the tree of the heads the chain names"
        return None


def read_chain(backend: Backend, keys: Mapping[str, bytes]) -> Chain:
    """Every checkpoint in `backend`, checked (signatures, numbering, chain, the last root)."""
    chain = Chain(keys)
    for position, record in backend.read(0):
        chain.add(position, record)
    why = chain.check_root()
    if why is not None:
        chain.problems.append(why)
    return chain


def check_log(game_id: str, chains: Mapping[int, bytes], chain: Chain) -> list[str]:
    """What the witness saw of match `game_id` that its log (seq -> chain hash) does not hold,
    and whether its head is in the last checkpoint's tree (by its inclusion proof)."""
    head = chain.tree.heads.get(game_id)
    if head is None:
        return []
    seq, at = head
    last = max(chains, default=0)
    problems = []
    if seq > last:
        problems.append(f"seq {last + 1}: the witness saw the log at seq {seq}; it ends at seq {last} (cut)")
    elif seq > 0 and chains.get(seq) != at:
        problems.append(f"seq {seq}: the witness saw another chain head there (rewritten)")
    proof = prove(chain, game_id)
    if proof is not None and not check_proof(proof):
        problems.append(f"seq {seq}: the witnessed head is not in the tree of the last checkpoint")
    return problems


def prove(chain: Chain, game_id: str) -> dict[str, object] | None:
    """The latest checkpoint with one match's head and its inclusion proof (docs/verifying.md)."""
    head = chain.tree.heads.get(game_id)
    if head is None or chain.last is None:
        return None
    index, path = chain.tree.proof(game_id)
    return {
        "checkpoint": chain.last.public(),
        "game_id": game_id,
        "seq": head[0],
        "chain_head": head[1].hex(),
        "leaf_index": index,
        "path": [p.hex() for p in path],
    }


def check_proof(proof: Mapping[str, object]) -> bool:
    cp = proof["checkpoint"]
    assert isinstance(cp, dict)
    path = proof["path"]
    assert isinstance(path, list)
    digest = leaf_hash(leaf(str(proof["game_id"]), int(str(proof["seq"])), bytes.fromhex(str(proof["chain_head"]))))
    return verify_inclusion(
        int(str(proof["leaf_index"])),
        int(cp["size"]),
        digest,
        [bytes.fromhex(p) for p in path],
        bytes.fromhex(cp["root"]),
    )


# --------------------------------------------------------------------------- a server's witness


class Witness:
    """A server's side of the witness: records the heads it verified or appended (`saw`), appends
    them as one signed checkpoint every `every` seconds (`run`), and answers the latest head any
    valid checkpoint names for a match (`head`, reading what other servers appended)."""

    def __init__(self, backend: Backend, signing: SigningKeys) -> None:
        self.backend = backend
        self.signing = signing
        self.chain = Chain(signing.listed())
        self._pending: dict[str, Head] = {}
        self._lock = threading.Lock()  # the chain: read and written in threads
        self._refresh()

    def _refresh(self) -> None:
        with self._lock:
            self._read_new()

    def _read_new(self) -> None:
        for position, record in self.backend.read(self.chain.position):
            why = self.chain.add(position, record)
            if why is not None:
                log.error("witness %s: %s", self.backend.where, why)

    async def head(self, game_id: str) -> Head | None:
        """The latest witnessed head of a match, with what other servers appended. A witness that
        cannot be read is logged and the heads read before answer (the check is the witness's
        addition to the log's own; a match is not refused for the witness's outage)."""
        try:
            await asyncio.to_thread(self._refresh)
        except Exception as exc:  # any backend's error: the store is not ours
            log.error("witness %s cannot be read: %s", self.backend.where, exc)
        return self.chain.tree.heads.get(game_id)

    def saw(self, game_id: str, seq: int, chain: bytes) -> None:
        known = self._pending.get(game_id) or self.chain.tree.heads.get(game_id)
        if known is None or seq > known[0]:
            self._pending[game_id] = (seq, chain)

    def flush(self) -> None:
        """Appends the pending heads as one signed checkpoint (kept for the next one when the
        witness cannot be written)."""
        self._keep(self._write(self._take()))

    def _take(self) -> dict[str, Head]:
        pending, self._pending = self._pending, {}
        return pending

    def _keep(self, unwritten: Mapping[str, Head]) -> None:
        for gid, head in unwritten.items():
            self.saw(gid, *head)

    def _write(self, pending: Mapping[str, Head]) -> Mapping[str, Head]:
        """Appends `pending` as the next checkpoint; returns what could not be written."""
        if not pending:
            return {}
        try:
            with self._lock:
                for _ in range(100):
                    self._read_new()  # the chain's end, with what others appended
                    heads = self.chain.tree.heads
                    changes = tuple(sorted((g, s, c) for g, (s, c) in pending.items() if s > heads.get(g, (-1,))[0]))
                    if not changes:
                        return {}
                    cp = self._next(changes)
                    if self.backend.append(cp.index, cp.record()):
                        self.chain.add(cp.index, cp.record())
                        return {}
                raise RuntimeError("its next position was taken 100 times in a row")
        except Exception as exc:  # any backend's error: the store is not ours
            log.error("witness %s cannot be written: %s", self.backend.where, exc)
            return pending

    def _next(self, changes: Iterable[tuple[str, int, bytes]]) -> Checkpoint:
        tree = self.chain.tree.copy()
        for g, s, c in changes:
            tree.set(g, (s, c))
        last = self.chain.last
        cp = Checkpoint(
            self.chain.position + 1,
            int(time.time() * 1000),
            len(tree.heads),
            tree.root(),
            last.digest() if last is not None else ZERO,
            tuple(changes),
            self.signing.current_id,
        )
        return dataclasses.replace(cp, signature=self.signing.current.sign(cp.message()))

    async def run(self, every: float) -> None:
        """Flushes every `every` seconds until cancelled, then once more."""
        try:
            while True:
                await asyncio.sleep(every)
                self._keep(await asyncio.to_thread(self._write, self._take()))
        finally:
            self.flush()
            self.backend.close()
