"""Match seeds sealed at rest (AES-256-GCM, `cryptography`).

A match's seed decides every hidden card: stored in clear, a database dump or replica would
reveal every hand of every running match. The store keeps each seed sealed with a server key
that is not in the database:

    sealed_seed = nonce (12 bytes) || AES-256-GCM(key, nonce, seed, aad = "tablier/seed\\0" || game id)
    seed_key_id = the key's id (`key_id`), so that old keys can still open what they sealed

The game id as associated data binds a sealed seed to its match: copied onto another match it
no longer opens. Keys are 32 random bytes written as 64 hex digits:

* ``TABLIER_SEED_KEY``: the current key (seals new seeds, opens its own);
* ``TABLIER_SEED_OLD_KEYS``: comma-separated earlier keys, only to open seeds sealed with them;
* neither set: ``<data dir>/seed.key``, generated on first use with owner-only permissions.

Rotation: set the new key as TABLIER_SEED_KEY and the old one in TABLIER_SEED_OLD_KEYS, run
`tablier rotate-seed-key` (reseals every seed with the new key, and seals seeds stored in clear
by earlier versions), then drop the old key.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

KEY_FILE = "seed.key"
NONCE_SIZE = 12


class SeedKeyError(Exception):
    """A key is malformed or missing (a configuration error, found at start)."""


class SeedUnreadable(Exception):
    """A sealed seed cannot be opened: its key is not configured, or it was changed."""

    def __init__(self, message: str, reason: str, game_id: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.game_id = game_id  # the match whose seed it is


def key_id(key: bytes) -> str:
    return hashlib.sha256(b"tablier/seed-key\0" + key).hexdigest()[:16]


def parse_key(text: str, what: str = "TABLIER_SEED_KEY") -> bytes:
    text = text.strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise SeedKeyError(f"{what} must be 64 hex digits (32 random bytes)") from None
    if len(key) != 32:
        raise SeedKeyError(f"{what} must be 64 hex digits (32 random bytes), not {len(text)} characters")
    return key


def new_key_text() -> str:
    return secrets.token_bytes(32).hex()


def _aad(game_id: str) -> bytes:
    return b"tablier/seed\0" + game_id.encode()


class SeedKeys:
    """The current key (seals) and earlier ones (only open)."""

    def __init__(self, current: bytes, old: list[bytes] | tuple[bytes, ...] = ()) -> None:
        self.current = current
        self.current_id = key_id(current)
        self._keys = {key_id(k): AESGCM(k) for k in (*old, current)}

    def seal(self, game_id: str, seed: bytes) -> tuple[str, bytes]:
        nonce = secrets.token_bytes(NONCE_SIZE)
        return self.current_id, nonce + self._keys[self.current_id].encrypt(nonce, seed, _aad(game_id))

    def open(self, game_id: str, kid: str, sealed: bytes) -> bytes:
        aead = self._keys.get(kid)
        if aead is None:
            raise SeedUnreadable(
                f"the seed of match {game_id} is sealed with key {kid}, which this server "
                "does not have (TABLIER_SEED_KEY / TABLIER_SEED_OLD_KEYS)",
                "SEED_KEY_UNKNOWN",
                game_id,
            )
        try:
            return aead.decrypt(sealed[:NONCE_SIZE], sealed[NONCE_SIZE:], _aad(game_id))
        except (InvalidTag, ValueError):
            raise SeedUnreadable(
                f"the sealed seed of match {game_id} was changed or belongs to another match", "SEED_TAMPERED", game_id
            ) from None

    @classmethod
    def from_env(cls, data_dir: Path | str, env: Mapping[str, str] | None = None) -> SeedKeys:
        env = os.environ if env is None else env
        old = [
            parse_key(k, "TABLIER_SEED_OLD_KEYS") for k in env.get("TABLIER_SEED_OLD_KEYS", "").split(",") if k.strip()
        ]
        text = env.get("TABLIER_SEED_KEY", "")
        if text.strip():
            return cls(parse_key(text), old)
        return cls(parse_key(read_or_make_key_file(Path(data_dir) / KEY_FILE), str(Path(data_dir) / KEY_FILE)), old)


def read_or_make_key_file(path: Path) -> str:
    """The key in `path`, made (owner-only, atomically: concurrent starts agree) if missing."""
    try:
        return _read_private(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(new_key_text() + "\n")
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # fails if another process made it first; theirs wins
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)
    return _read_private(path)


def _read_private(path: Path) -> str:
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise SeedKeyError(f"{path} is readable by others (mode {mode:o}): chmod 600 it")
    return path.read_text()
