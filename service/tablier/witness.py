"""A witness of match heads outside the database: signed checkpoints appended to a file.

Every few seconds a server appends one checkpoint naming the heads (seq, chain hash) of the
matches whose log it saw move since the last one, signed with its receipt key
(`tablier.receipts`), to ``<witness dir>/checkpoints.jsonl`` (one JSON object a line, only ever
appended; servers sharing a database may share the file). A server loading a match cold refuses
it when its log ends before, or differs at, the latest head a valid checkpoint names for it
(DATA_LOSS with the seq); `tablier verify --witness DIR` does the same offline.

    message   = "tablier/checkpoint\\0" || i64be(at_ms) || u32be(n)
                || for each head, by game id: u32be(len(game id)) || game id || u64be(seq)
                   || u32be(len(chain hash)) || chain hash
    signature = Ed25519(signing key, message)

A line: {"at_ms": ..., "heads": [[game_id, seq, chain_hex], ...], "key_id": ..., "signature": hex}.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import struct
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from tablier.receipts import SigningKeys

log = logging.getLogger(__name__)

FILE = "checkpoints.jsonl"

Head = tuple[int, bytes]  # (seq, chain hash)


def message(at_ms: int, heads: Iterable[tuple[str, int, bytes]]) -> bytes:
    ordered = sorted(heads)
    out = [b"tablier/checkpoint\0", struct.pack(">qI", at_ms, len(ordered))]
    for gid, seq, chain in ordered:
        g = gid.encode()
        out += [struct.pack(">I", len(g)), g, struct.pack(">Q", seq), struct.pack(">I", len(chain)), chain]
    return b"".join(out)


def parse_line(line: str, keys: Mapping[str, bytes]) -> tuple[dict[str, Head] | None, str | None]:
    """The heads a checkpoint line names, or None and why it is not a valid checkpoint."""
    try:
        doc = json.loads(line)
        heads = [(str(g), int(s), bytes.fromhex(c)) for g, s, c in doc["heads"]]
        at, kid, sig = int(doc["at_ms"]), str(doc["key_id"]), bytes.fromhex(doc["signature"])
    except (ValueError, KeyError, TypeError):
        return None, "a line that is not a checkpoint"
    public = keys.get(kid)
    if public is None:
        return None, f"a checkpoint signed with key {kid!r}, which is not among the trusted keys"
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(sig, message(at, heads))
    except (InvalidSignature, ValueError):
        return None, "a checkpoint whose signature does not verify"
    return {g: (s, c) for g, s, c in heads}, None


def read_heads(directory: Path | str, keys: Mapping[str, bytes]) -> tuple[dict[str, Head], list[str]]:
    """The latest witnessed head of each match in the witness at `directory`, and the lines that
    are not valid checkpoints (by line number)."""
    heads: dict[str, Head] = {}
    problems = []
    path = Path(directory) / FILE
    if not path.exists():
        return heads, [f"no witness at {path}"]
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        found, why = parse_line(line, keys)
        if found is None:
            problems.append(f"witness line {n}: {why}")
            continue
        _merge(heads, found)
    return heads, problems


def _merge(heads: dict[str, Head], found: Mapping[str, Head]) -> None:
    for gid, head in found.items():
        if gid not in heads or head[0] >= heads[gid][0]:
            heads[gid] = head


def check_log(game_id: str, chains: Mapping[int, bytes], heads: Mapping[str, Head]) -> list[str]:
    """What the witness saw of match `game_id` that its log (seq -> chain hash) does not hold."""
    head = heads.get(game_id)
    if head is None:
        return []
    seq, chain = head
    last = max(chains, default=0)
    if seq > last:
        return [f"seq {last + 1}: the witness saw the log at seq {seq}; it ends at seq {last} (cut)"]
    if seq > 0 and chains.get(seq) != chain:
        return [f"seq {seq}: the witness saw another chain head there (rewritten)"]
    return []


class Witness:
    """A server's side of the witness: records the heads it verified or appended (`saw`), appends
    them as one signed checkpoint every `every` seconds (`run`), and answers the latest head
    any valid checkpoint names for a match (`head`, reading what other servers appended)."""

    def __init__(self, directory: Path | str, signing: SigningKeys) -> None:
        self.path = Path(directory) / FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.signing = signing
        self.keys = signing.listed()
        self._heads: dict[str, Head] = {}
        self._pending: dict[str, Head] = {}
        self._offset = 0
        self._read_new()

    def _read_new(self) -> None:
        try:
            with self.path.open("rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        self._offset += end
        for line in data[:end].decode(errors="replace").splitlines():
            if not line.strip():
                continue
            found, why = parse_line(line, self.keys)
            if found is None:
                log.warning("witness %s: %s", self.path, why)
            else:
                _merge(self._heads, found)

    def head(self, game_id: str) -> Head | None:
        self._read_new()
        return self._heads.get(game_id)

    def saw(self, game_id: str, seq: int, chain: bytes) -> None:
        known = self._pending.get(game_id) or self._heads.get(game_id)
        if known is None or seq > known[0]:
            self._pending[game_id] = (seq, chain)

    def flush(self) -> None:
        """Appends the pending heads as one signed checkpoint (one write of one line)."""
        self._write(self._take())

    def _take(self) -> dict[str, Head]:
        pending, self._pending = self._pending, {}
        return pending

    def _write(self, pending: dict[str, Head]) -> None:
        if not pending:
            return
        at = int(time.time() * 1000)
        heads = [(g, s, c) for g, (s, c) in pending.items()]
        signature = self.signing.current.sign(message(at, heads))
        line = json.dumps(
            {
                "at_ms": at,
                "heads": [[g, s, c.hex()] for g, s, c in sorted(heads)],
                "key_id": self.signing.current_id,
                "signature": signature.hex(),
            },
            separators=(",", ":"),
        )
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        _merge(self._heads, pending)

    async def run(self, every: float) -> None:
        """Flushes every `every` seconds until cancelled, then once more."""
        try:
            while True:
                await asyncio.sleep(every)
                await asyncio.to_thread(self._write, self._take())
        finally:
            self.flush()
