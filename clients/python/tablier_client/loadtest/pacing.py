"""Creating a run's matches within the server's CreateGame limit, so a run measures moves,
not that limit.

The server lets one peer create `burst` matches at once, then `per_second` (its
`--create-burst`, `--create-rate`); the host's or creator's token is exempt. It states the
limit in each refusal (RESOURCE_EXHAUSTED `CREATE_RATE_LIMITED`, ErrorInfo metadata `burst`,
`per_second`, `retry_after_ms`). `Pacer` sends one CreateGame at a time until the server has
said its limit, then keeps the same token bucket on the client and waits for a token before
each creation: a run meets at most about one refusal instead of one per worker and second.
A refusal is counted apart from failed units (it is not one: the creation is sent again).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from .. import errors

R = TypeVar("R")

LIMITED = "CREATE_RATE_LIMITED"
# What servers that do not send the limit as metadata say in the message.
_MESSAGE = re.compile(r"at most (\d+) at once, then ([0-9.]+) per second")


@dataclass(frozen=True)
class Limit:
    burst: int
    per_second: float

    def __str__(self) -> str:
        return f"{self.burst} matches at once, then {self.per_second:g} per second"


def limit_of(exc: errors.ResourceExhausted) -> Limit | None:
    """The creation limit a refusal states (its metadata, else its message), or None."""
    try:
        return Limit(int(exc.metadata["burst"]), float(exc.metadata["per_second"]))
    except (KeyError, ValueError):
        pass
    found = _MESSAGE.search(str(exc))
    return Limit(int(found[1]), float(found[2])) if found else None


def retry_after(exc: errors.ResourceExhausted) -> float | None:
    try:
        return int(exc.metadata["retry_after_ms"]) / 1000
    except (KeyError, ValueError):
        return None


class Pacer:
    """Creations one at a time, within the limit the server stated (none until it states one)."""

    def __init__(self) -> None:
        self.limit: Limit | None = None
        self.created = 0
        # CreateGame refused for the creation limit; seconds the pacer waited for it, and the
        # seconds its callers (the workers) were held back, each counted (they queue together).
        self.refused = 0
        self.waited = 0.0
        self.blocked = 0.0
        self._tokens = 0.0
        self._at = 0.0
        self._lock = asyncio.Lock()
        # A refusal without a stated limit: wait as it says, doubling from here.
        self._backoff = 0.1

    async def create(self, call: Callable[[], Awaitable[R]]) -> R:
        """`call()` (one CreateGame) once the limit allows it; sent again after a refusal for
        the limit, which is counted in `refused`; any other error is raised."""
        loop = asyncio.get_running_loop()
        entered = loop.time()
        async with self._lock:
            while True:
                await self._token(loop)
                self.blocked += loop.time() - entered
                try:
                    result = await call()
                except errors.ResourceExhausted as exc:
                    if exc.reason != LIMITED:
                        raise
                    self.refused += 1
                    entered = loop.time()
                    await self._learn(exc, loop)
                    continue
                self.created += 1
                return result

    async def _token(self, loop: asyncio.AbstractEventLoop) -> None:
        limit = self.limit
        if limit is None:
            return
        now = loop.time()
        self._tokens = min(float(limit.burst), self._tokens + (now - self._at) * limit.per_second)
        self._at = now
        if self._tokens < 1:
            wait = (1 - self._tokens) / limit.per_second
            await self._sleep(wait)
            self._tokens, self._at = 1.0, loop.time()
        self._tokens -= 1

    async def _learn(self, exc: errors.ResourceExhausted, loop: asyncio.AbstractEventLoop) -> None:
        after = retry_after(exc)
        limit = limit_of(exc)
        if limit is not None and limit.per_second > 0:
            self.limit = limit
            # The server's bucket is empty now and holds a token again after `after`.
            wait = after if after is not None else 1 / limit.per_second
            self._tokens, self._at = 1 - wait * limit.per_second, loop.time()
            return
        await self._sleep(after if after is not None else self._backoff)
        self._backoff = min(self._backoff * 2, 5.0)

    async def _sleep(self, seconds: float) -> None:
        self.waited += seconds
        await asyncio.sleep(seconds)

    def describe(self, host_token: bool) -> dict[str, object]:
        """The report's `creation` part."""
        return {
            "created": self.created,
            "rate_limited": self.refused,
            "limit": None if self.limit is None else {"burst": self.limit.burst, "per_second": self.limit.per_second},
            "waited_seconds": round(self.waited, 3),
            "workers_waited_seconds": round(self.blocked, 3),
            "token": host_token,
        }


def creation_line(pacer: Pacer) -> str:
    """The summary's line on matches: created, and refused for the creation limit (apart from
    failed units: those are moves, evaluations; a refused creation is sent again)."""
    line = f"matches: {pacer.created} created"
    if pacer.refused:
        line += (
            f"; CreateGame refused {pacer.refused} times for the server's creation limit"
            f" ({pacer.limit or 'not stated'}), not counted as failures: creation is paced by it"
        )
    if pacer.waited:
        line += f"; workers waited {pacer.blocked:.1f} s in all for it"
    return line


def creation_notes(pacer: Pacer, token: bool, worker_seconds: float) -> list[str]:
    """What the report says when the creation limit held the run back."""
    if not pacer.refused and not pacer.waited:
        return []
    share = pacer.blocked / worker_seconds if worker_seconds > 0 else 0.0
    notes = [
        f"matches were created within the server's creation limit ({pacer.limit or 'not stated'}); "
        + (
            "the token given is not exempt from it"
            if token
            else "the host token (--token, default $TABLIER_HOST_TOKEN) creates more, without the limit"
        )
    ]
    if share > 0.05:
        notes.append(
            f"the creation limit bounded this run: workers waited {100 * share:.0f}% of their time for a new "
            "match, so the rates above are below what the server's moves allow"
        )
    return notes
