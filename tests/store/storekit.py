"""Helpers for the store tests: sample matches and events, chain recomputation."""

from __future__ import annotations

import hashlib
import uuid

from tablier.store.base import GameRecord, NewEvent, StoredEvent, chain_hash, genesis_hash

WAIT = 10.0  # seconds a watcher may take to see an append


def game(seats: int = 2, **options: str) -> GameRecord:
    return GameRecord(
        game_id=str(uuid.uuid4()),
        game_type="test_game",
        seats=seats,
        options=dict(options),
        seed=hashlib.sha256(b"seed").digest(),
        token_hashes=tuple(hashlib.sha256(b"token%d" % s).digest() for s in range(seats)),
    )


def event(n: int, seat: int | None = 0) -> NewEvent:
    return NewEvent(
        kind=f"kind_{n}",
        payload=b"\x00payload\xff" + n.to_bytes(4, "big"),
        seat=seat,
        core_version="test-1",
        state_hash=hashlib.sha256(b"state%d" % n).digest(),
    )


def recompute_chain(record: GameRecord, log: list[StoredEvent]) -> list[bytes]:
    prev, out = genesis_hash(record), []
    for e in log:
        new = NewEvent(e.kind, e.payload, e.seat, e.core_version, e.state_hash)
        prev = chain_hash(prev, e.seq, new, e.command_id)
        out.append(prev)
    return out
