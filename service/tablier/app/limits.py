"""What one client may ask of the server: stream counts, creation policy and rates, option
sizes, and the throttle on wrong credentials. No transport types: a peer is a string the API
layer derives from the connection (its address without the port).

Defaults are meant for a public port; `Limits` documents each one and `tablier serve` exposes
them as options (docs/operations.md, "Limits and operations").
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from .errors import PermissionDenied, ResourceExhausted, Unauthenticated

CREATE_POLICIES = ("open", "token")


@dataclass(frozen=True)
class Limits:
    # WatchGame streams open at once from one peer, and on one match (this process).
    watch_per_peer: int = 64
    watch_per_match: int = 1000
    # Of those on one match, the streams without WatchGameRequest.batches: each costs the
    # server one write per event, so a crowd of them makes the match's moves wait on writes;
    # past it a stream is refused (WATCH_BATCHES_REQUIRED) and told to ask for batches.
    watch_unbatched_per_match: int = 16
    # Events buffered for one watcher that does not read; past it its stream ends with
    # RESOURCE_EXHAUSTED (WATCH_BUFFER_FULL) and the seq to resume after.
    watch_buffer: int = 256
    # Milliseconds between two sends to one watcher, per watcher in this process (`watch.py`):
    # the watchers' writes stay a bounded share of the event loop however many there are.
    # 0: every event is sent at once.
    watch_pace: float = 1.0
    # CreateGame: `open` (anyone, rate-limited per peer) or `token` (the creator token or
    # the operator token is needed). Per peer: a bucket of `create_burst` matches refilled at
    # `create_rate` per second.
    create_policy: str = "open"
    create_rate: float = 1.0
    create_burst: int = 30
    # Wrong credentials (unknown token, another match's token, not the operator) from one
    # peer: a bucket of `bad_credential_burst` refilled at `bad_credential_rate` per second;
    # once empty, calls from that peer that carry a credential are refused until it refills.
    bad_credential_rate: float = 2.0
    bad_credential_burst: int = 20
    # CreateGame options: how many, and how long a name or value may be (characters).
    max_options: int = 16
    max_option_length: int = 64

    def __post_init__(self) -> None:
        if self.create_policy not in CREATE_POLICIES:
            raise ValueError(f"create policy must be one of {', '.join(CREATE_POLICIES)}, not {self.create_policy!r}")
        for name in (
            "watch_per_peer",
            "watch_per_match",
            "watch_unbatched_per_match",
            "watch_buffer",
            "create_burst",
            "bad_credential_burst",
            "max_options",
            "max_option_length",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name.replace('_', '-')} must be at least 1")
        if not 0 <= self.watch_pace < math.inf:
            raise ValueError("watch-pace must be 0 or more milliseconds")
        for name in ("create_rate", "bad_credential_rate"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name.replace('_', '-')} must be a positive number")


# Peers remembered by a bucket set; the least recently seen are forgotten first (a forgotten
# peer starts again with a full bucket, so this bounds memory, not fairness).
MAX_PEERS = 65_536


class PeerBuckets:
    """One token bucket per peer: `burst` tokens, refilled at `rate` per second."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def _level(self, peer: str) -> tuple[float, float]:
        now = self._clock()
        tokens, then = self._buckets.get(peer, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - then) * self.rate), now

    def wait(self, peer: str) -> float:
        """Seconds until the peer has a token again (0: it has one now)."""
        tokens, _ = self._level(peer)
        return 0.0 if tokens >= 1 else (1 - tokens) / self.rate

    def take(self, peer: str) -> float:
        """Takes a token if there is one and returns 0, else returns the seconds to wait."""
        tokens, now = self._level(peer)
        if tokens < 1:
            return (1 - tokens) / self.rate
        self._buckets[peer] = (tokens - 1, now)
        self._buckets.move_to_end(peer)
        while len(self._buckets) > MAX_PEERS:
            self._buckets.popitem(last=False)
        return 0.0


def _after(seconds: float) -> dict[str, str]:
    return {"retry_after_ms": str(max(1, math.ceil(seconds * 1000)))}


# Failures that mean "this credential is wrong", counted against the peer. A missing token is
# not a guess and costs nothing.
_BAD_CREDENTIAL_REASONS = frozenset({"BAD_TOKEN", "WRONG_MATCH", "NOT_OPERATOR", "BAD_CREATOR_TOKEN"})


class Limiter:
    """The per-peer counters of one server process."""

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits or Limits()
        self._create = PeerBuckets(self.limits.create_rate, self.limits.create_burst, clock)
        # The same rate per signed-in player, whichever peers it creates from.
        self._create_player = PeerBuckets(self.limits.create_rate, self.limits.create_burst, clock)
        self._bad = PeerBuckets(self.limits.bad_credential_rate, self.limits.bad_credential_burst, clock)
        self._watch_peer: dict[str, int] = {}
        self._watch_match: dict[str, int] = {}
        self._watch_unbatched: dict[str, int] = {}

    # -- creation -----------------------------------------------------------------------

    def check_options(self, options: dict[str, str]) -> None:
        from .errors import BadRequest

        lim = self.limits
        if len(options) > lim.max_options:
            raise BadRequest(f"at most {lim.max_options} options, not {len(options)}", "TOO_MANY_OPTIONS")
        for name, value in options.items():
            if len(name) > lim.max_option_length or len(value) > lim.max_option_length:
                raise BadRequest(
                    f"option names and values are at most {lim.max_option_length} characters (option {name[:64]!r})",
                    "OPTION_TOO_LONG",
                )

    def admit_create(self, peer: str | None, has_creator_credential: bool, player: str | None = None) -> None:
        """The creation policy and the peer's creation rate, and the player's when a signed-in
        player creates (a creator credential is exempt from the rate: it is the operator's to
        hand out). `peer` None is a caller in this process, which no per-peer limit applies to."""
        if has_creator_credential:
            return
        if self.limits.create_policy == "token":
            raise Unauthenticated(
                "creating a match needs 'authorization: Bearer <creator token>' on this server",
                "CREATOR_TOKEN_REQUIRED",
            )
        if player is not None:
            wait = self._create_player.take(player)
            if wait:
                raise ResourceExhausted(
                    f"too many matches created by this player: at most {self.limits.create_burst} at once,"
                    f" then {self.limits.create_rate:g} per second; retry in {wait:.1f} s",
                    "CREATE_RATE_LIMITED",
                    self._create_limit(wait),
                )
        if peer is None:
            return
        wait = self._create.take(peer)
        if wait:
            raise ResourceExhausted(
                f"too many matches created from {peer or 'this peer'}: at most {self.limits.create_burst} at once,"
                f" then {self.limits.create_rate:g} per second; retry in {wait:.1f} s",
                "CREATE_RATE_LIMITED",
                self._create_limit(wait),
            )

    def _create_limit(self, wait: float) -> dict[str, str]:
        """A creation refusal's metadata: when to retry, and the limit itself (`burst` matches
        at once, then `per_second`), so a client can pace its creations by it."""
        return {**_after(wait), "burst": str(self.limits.create_burst), "per_second": f"{self.limits.create_rate:g}"}

    # -- credentials ----------------------------------------------------------------------

    def check_credential_allowed(self, peer: str) -> None:
        """Refuses a call that carries a credential from a peer whose wrong credentials used
        up its bucket (it is guessing)."""
        wait = self._bad.wait(peer)
        if wait:
            raise ResourceExhausted(
                f"too many wrong credentials from {peer or 'this peer'}; retry in {wait:.1f} s",
                "TOO_MANY_BAD_CREDENTIALS",
                _after(wait),
            )

    def note_failure(self, peer: str, exc: BaseException) -> None:
        """Counts a refused credential against the peer."""
        if isinstance(exc, Unauthenticated | PermissionDenied) and exc.reason in _BAD_CREDENTIAL_REASONS:
            self._bad.take(peer)

    # -- watch streams --------------------------------------------------------------------

    def open_watch(self, peer: str | None, game_id: str, batched: bool = True) -> Callable[[], None]:
        """Counts a new stream; returns the function that releases it. `peer` None (a caller
        in this process) counts against the match only. `batched` False: a stream of one
        event per response, which also counts against the match's unbatched limit."""
        lim = self.limits
        if peer is not None and self._watch_peer.get(peer, 0) >= lim.watch_per_peer:
            raise ResourceExhausted(
                f"at most {lim.watch_per_peer} WatchGame streams from one peer", "TOO_MANY_WATCHES_FROM_PEER"
            )
        if self._watch_match.get(game_id, 0) >= lim.watch_per_match:
            raise ResourceExhausted(
                f"at most {lim.watch_per_match} WatchGame streams on one match on this server",
                "TOO_MANY_WATCHES_ON_MATCH",
            )
        if not batched and self._watch_unbatched.get(game_id, 0) >= lim.watch_unbatched_per_match:
            raise ResourceExhausted(
                f"at most {lim.watch_unbatched_per_match} WatchGame streams without batches on one match on this"
                " server; ask for batches (WatchGameRequest.batches = true)",
                "WATCH_BATCHES_REQUIRED",
            )
        counted = [(self._watch_match, game_id)] + ([(self._watch_peer, peer)] if peer is not None else [])
        if not batched:
            counted.append((self._watch_unbatched, game_id))
        for counts, key in counted:
            counts[key] = counts.get(key, 0) + 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            for counts, key in counted:
                left = counts[key] - 1
                if left:
                    counts[key] = left
                else:
                    del counts[key]

        return release

    @property
    def open_watches(self) -> int:
        return sum(self._watch_match.values())
