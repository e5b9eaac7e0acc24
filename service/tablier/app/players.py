"""Players: who sits in a seat (docs/api.md "Players").

A player is an id, a display name and a colour (`store.players`). A player credential is
`tp1.<43 characters of base64url>`, shown once and kept as its SHA-256 only; it is told from a
seat token (`<game id>.<secret>`) by its prefix. The transports resolve a player credential
once per call (`resolve`): the `Credential` they hand the application then names the player,
and `access.Access` finds the seat that player holds in the match asked about.

External identities: with an OpenID Connect issuer (`tablier serve --oidc-issuer`), an ID token
the issuer signed for the server's audience is exchanged for a player credential
(`sign_in_oidc`); the issuer's keys come from its JWKS, found through its discovery document,
cached, and fetched again when a token names a key id the cache lacks (a key rotation).
"""

from __future__ import annotations

import asyncio
import functools
import json
import secrets
import unicodedata
import urllib.request
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import ParamSpec, TypeVar

import jwt

from tablier.store.base import StoreError
from tablier.store.players import PlayerDirectory, PlayerRecord, UnknownPlayer, new_player

from .auth import Credential, token_hash
from .errors import BadRequest, MatchNotFound, NotAllowedNow, ResourceExhausted, Unauthenticated, from_store
from .limits import Limits, PeerBuckets, _after

PLAYER_TOKEN_PREFIX = "tp1."
MAX_NAME = 32
# The algorithms an ID token may be signed with.
OIDC_ALGORITHMS = ["RS256", "ES256", "EdDSA"]
MAX_ID_TOKEN = 16 * 1024


class PlayerNotFound(MatchNotFound):
    default_reason = "UNKNOWN_PLAYER"


def check_display_name(name: str) -> str:
    """The name as it is kept (NFC, surrounding spaces removed), or INVALID_ARGUMENT with
    the reason in words: 1 to 32 characters, none a control or format character (nor a line
    or paragraph separator)."""
    name = unicodedata.normalize("NFC", name).strip()
    if not name:
        raise BadRequest("a display name needs at least one character", "BAD_DISPLAY_NAME")
    if len(name) > MAX_NAME:
        raise BadRequest(f"a display name is at most {MAX_NAME} characters, not {len(name)}", "BAD_DISPLAY_NAME")
    for c in name:
        category = unicodedata.category(c)
        if category[0] == "C" or category in ("Zl", "Zp"):
            raise BadRequest(
                f"a display name may not hold control or format characters (U+{ord(c):04X})", "BAD_DISPLAY_NAME"
            )
    return name


def is_player_token(token: str | None) -> bool:
    return bool(token) and token.startswith(PLAYER_TOKEN_PREFIX)  # type: ignore[union-attr]


def new_player_token() -> str:
    return PLAYER_TOKEN_PREFIX + secrets.token_urlsafe(32)


class Oidc:
    """Verifies ID tokens of one issuer for one audience against the issuer's JWKS (PyJWT)."""

    def __init__(self, issuer: str, audience: str, jwks_uri: str | None = None) -> None:
        self.issuer = issuer.rstrip("/")
        self.audience = audience
        self._jwks_uri = jwks_uri
        self._client: jwt.PyJWKClient | None = None

    def _keys(self) -> jwt.PyJWKClient:
        if self._client is None:
            uri = self._jwks_uri
            if uri is None:
                with urllib.request.urlopen(f"{self.issuer}/.well-known/openid-configuration", timeout=5) as r:
                    uri = str(json.load(r)["jwks_uri"])
            # Keys cached for 5 minutes; a key id the cache lacks fetches the set again (a
            # rotation), at most once a second (tokens naming made-up key ids cannot make the
            # server hammer the issuer).
            self._client = jwt.PyJWKClient(uri, cache_keys=True, lifespan=300, timeout=5, cooldown_duration=1.0)
        return self._client

    def _verify(self, token: str) -> dict[str, object]:
        key = self._keys().get_signing_key_from_jwt(token)
        claims: dict[str, object] = jwt.decode(
            token,
            key.key,
            algorithms=OIDC_ALGORITHMS,
            audience=self.audience,
            issuer=self.issuer,
            options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            leeway=30,
        )
        return claims

    async def verify(self, token: str) -> dict[str, object]:
        """The token's claims, or UNAUTHENTICATED BAD_ID_TOKEN saying why."""
        if not token or len(token) > MAX_ID_TOKEN:
            raise Unauthenticated("id_token is missing or longer than 16 KiB", "BAD_ID_TOKEN")
        try:
            return await asyncio.to_thread(self._verify, token)
        except (jwt.PyJWTError, OSError, KeyError, ValueError) as exc:
            raise Unauthenticated(f"the ID token does not verify: {str(exc)[:200]}", "BAD_ID_TOKEN") from None


P = ParamSpec("P")
R = TypeVar("R")


def _translated(call: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """`call`, whose store errors leave as the application's (`errors.from_store`: e.g. the
    database down is UNAVAILABLE, as for every other call)."""

    @functools.wraps(call)
    async def translating(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await call(*args, **kwargs)
        except StoreError as exc:
            raise from_store(exc) from exc

    return translating


class Players:
    def __init__(self, directory: PlayerDirectory, limits: Limits | None = None, oidc: Oidc | None = None) -> None:
        """Per peer, guest players created and OIDC sign-ins; per player, renames and
        revocations: each at the server's creation rate (`Limits.create_rate`, a bucket of
        `create_burst`). Matches created by a player are limited per player by `Limiter`."""
        self.directory = directory
        self.oidc = oidc
        lim = limits or Limits()
        self._per_peer = PeerBuckets(lim.create_rate, lim.create_burst)
        self._per_player = PeerBuckets(lim.create_rate, lim.create_burst)

    @staticmethod
    def _take(buckets: PeerBuckets, key: str | None, who: str) -> None:
        if key is None:
            return
        wait = buckets.take(key)
        if wait:
            raise ResourceExhausted(
                f"too many player calls from {who}; retry in {wait:.1f} s", "PLAYER_RATE_LIMITED", _after(wait)
            )

    def name(self, player_id: str) -> tuple[str, int] | None:
        """The player's display name and colour as this server last heard them."""
        return self.directory.names.get(player_id)

    @_translated
    async def resolve(self, cred: Credential) -> Credential:
        """`cred` naming its player when it is a player credential (UNAUTHENTICATED BAD_TOKEN
        when that credential is unknown or revoked); any other credential as it is."""
        if not is_player_token(cred.token):
            return cred
        assert cred.token is not None
        player = await self.directory.credential_player(token_hash(cred.token))
        if player is None:
            raise Unauthenticated("the player credential is unknown or revoked", "BAD_TOKEN")
        return replace(cred, player_id=player)

    async def _caller(self, cred: Credential) -> str:
        cred = await self.resolve(cred)
        if cred.player_id is None:
            raise Unauthenticated(
                "this call needs 'authorization: Bearer <player credential>' (PlayerService.CreateGuestPlayer)",
                "PLAYER_CREDENTIAL_REQUIRED",
            )
        return cred.player_id

    @_translated
    async def create_guest(self, display_name: str, peer: str | None = None) -> tuple[PlayerRecord, str]:
        name = check_display_name(display_name)
        self._take(self._per_peer, peer, peer or "this peer")
        token = new_player_token()
        return await self.directory.create_player(new_player(name), token_hash(token)), token

    @_translated
    async def sign_in_oidc(
        self, id_token: str, display_name: str = "", peer: str | None = None
    ) -> tuple[PlayerRecord, str, bool]:
        if self.oidc is None:
            raise NotAllowedNow("this server trusts no OpenID Connect issuer (--oidc-issuer)", "OIDC_NOT_CONFIGURED")
        self._take(self._per_peer, peer, peer or "this peer")
        claims = await self.oidc.verify(id_token)
        subject = str(claims["sub"])
        given = display_name or str(claims.get("name") or claims.get("preferred_username") or "Player")
        try:
            name = check_display_name(given)
        except BadRequest:
            if display_name:
                raise
            name = check_display_name(given[:MAX_NAME]) if given.strip() else "Player"
        token = new_player_token()
        player, created = await self.directory.external_player(
            new_player(name, self.oidc.issuer, subject), token_hash(token)
        )
        return player, token, created

    @_translated
    async def me(self, cred: Credential) -> PlayerRecord:
        return await self.get(await self._caller(cred))

    @_translated
    async def get(self, player_id: str) -> PlayerRecord:
        try:
            return await self.directory.get_player(_player_id(player_id))
        except UnknownPlayer:
            raise PlayerNotFound(f"no player {player_id[:64]!r}") from None

    @_translated
    async def rename(self, cred: Credential, display_name: str) -> PlayerRecord:
        name = check_display_name(display_name)
        player = await self._caller(cred)
        self._take(self._per_player, player, "this player")
        try:
            return await self.directory.rename(player, name)
        except UnknownPlayer:
            raise PlayerNotFound(f"no player {player}") from None

    @_translated
    async def revoke(self, cred: Credential, every_credential: bool = False) -> int:
        player = await self._caller(cred)
        self._take(self._per_player, player, "this player")
        assert cred.token is not None
        return await self.directory.revoke(token_hash(cred.token), every_credential)


def _player_id(text: str) -> str:
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise BadRequest(f"player_id {text[:64]!r} is not a uuid", "BAD_PLAYER_ID") from None
