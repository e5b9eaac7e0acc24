"""The scenarios: what one unit of load is.

- `evaluate`: one EvaluatePosition of a position taken in turn from a list (generated from
  seeded bot matches played over the API, or read from a JSON file);
- `play`: one move of a bot match (SuggestMove or ListLegalMoves + PlayMove; a new match with
  CreateGame when the last one is over);
- `watch`: as `play`, with N spectators per match streaming WatchGame; each move's delivery to
  each spectator (from its PlayMove being sent to the first update that covers it) is recorded
  as `WatchGame`.

Each unit runs on a `Slot` (a match in progress, spectators) that one worker owns at a time.
"""

from __future__ import annotations

import asyncio
import bisect
import functools
import hashlib
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from google.protobuf import json_format

from .. import errors
from ..sdk import Client, Created, message_class, pack, with_game
from ..v1 import common_pb2, service_pb2
from .pacing import Pacer
from .stats import Recorder

R = TypeVar("R")


def status_of(exc: errors.TablierError) -> str:
    return f"{exc.code.name} {exc.reason}" if exc.reason else exc.code.name


# Waits after a RESOURCE_EXHAUSTED that names no retry time: doubling from the first, at most the last.
FIRST_BACKOFF, MAX_BACKOFF = 0.1, 5.0


def retry_after(exc: errors.ResourceExhausted) -> float | None:
    """The server's retry hint (ErrorInfo metadata `retry_after_ms`), in seconds."""
    try:
        return int(exc.metadata["retry_after_ms"]) / 1000
    except (KeyError, ValueError):
        return None


async def patiently(call: Callable[[], Awaitable[R]]) -> R:
    """`call()`, repeated after a RESOURCE_EXHAUSTED as long as the server says (set-up calls,
    not measured)."""
    backoff = FIRST_BACKOFF
    while True:
        try:
            return await call()
        except errors.ResourceExhausted as exc:
            hint = retry_after(exc)
            await asyncio.sleep(hint if hint is not None else backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)


async def timed(
    rec: Recorder, rpc: str, call: Callable[[], Awaitable[R]], started: float | None = None, *, wait: bool = True
) -> R:
    """`call()` recorded under `rpc`, from `started` (default: now) to its answer. A limit of
    the server (RESOURCE_EXHAUSTED: nothing was done) is recorded, then (with `wait`) the call
    is repeated after the wait the server names (`retry_after_ms`), or a doubling one when it
    names none, until it is answered or the run ends; the time waited is counted in
    `rec.backoff`. Without `wait` it is raised, for the caller to pace (`pacing.Pacer`)."""
    loop = asyncio.get_running_loop()
    t0 = loop.time() if started is None else started
    backoff = FIRST_BACKOFF
    while True:
        try:
            result = await call()
        except errors.ResourceExhausted as exc:
            rec.record(rpc, t0, loop.time(), status_of(exc))
            if not wait:
                raise
            hint = retry_after(exc)
            pause = hint if hint is not None else backoff
            backoff = min(backoff * 2, MAX_BACKOFF)
            rec.backoff[status_of(exc)] = rec.backoff.get(status_of(exc), 0.0) + pause
            await asyncio.sleep(pause)
            t0 = loop.time()
            continue
        except errors.TablierError as exc:
            rec.record(rpc, t0, loop.time(), status_of(exc))
            raise
        rec.record(rpc, t0, loop.time())
        return result


# ------------------------------------------------------------------------------ positions


@dataclass
class Positions:
    requests: list[service_pb2.EvaluatePositionRequest]
    source: str
    refused: dict[str, int] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        games: dict[str, int] = {}
        for r in self.requests:
            games[r.game_type] = games.get(r.game_type, 0) + 1
        return {
            "source": self.source,
            "count": len(self.requests),
            "per_game": games,
            "refused_by_server": self.refused,
        }


def seed_bytes(seed: int, game: str, match: int) -> bytes:
    return hashlib.sha256(f"tablier-loadtest:{seed}:{game}:{match}".encode()).digest()


async def generate_positions(
    client: Client, types: list[common_pb2.GameType], *, seed: int, per_game: int, matches: int, seeded: bool
) -> Positions:
    """Positions from bot matches played over the API (seeded when the client holds the
    auditor token): after each move, the Position the seat awaited next faces, as the server
    gives it to that seat (GetView with_position: its own hand and the public table), spread
    evenly over each match and kept when the server's evaluator accepts it."""
    out = Positions([], "generated from seeded bot matches" if seeded else "generated from bot matches")
    for t in types:
        found: list[service_pb2.EvaluatePositionRequest] = []
        for m in range(matches):
            created: Created[Any, Any, Any] = await patiently(
                functools.partial(
                    client.create, t.id, t.min_players or 2, seed=seed_bytes(seed, t.id, m) if seeded else b""
                )
            )
            state = created.state
            awaited: list[tuple[int, int]] = []  # (seq, seat awaited then)
            while not state.over and len(awaited) < 400:
                handle = created.seats[state.to_act[0]]
                suggestion = await handle.suggest()
                played = await handle.play(suggestion.action, expected_seq=suggestion.seq)
                state = played.state
                if not state.over:
                    awaited.append((state.seq, state.to_act[0]))
            wanted = max(1, per_game // max(1, matches))
            for seq, seat in awaited[:: max(1, len(awaited) // wanted)][:wanted]:
                got = await created.seats[seat].position(at_seq=seq)
                found.append(service_pb2.EvaluatePositionRequest(game_type=t.id, position=pack(got.position)))
        accepted = []
        for request in found[:per_game]:
            try:
                await client.call(
                    client.stub.EvaluatePosition, request, client._metadata(client.token), repeatable=False
                )
                accepted.append(request)
            except errors.TablierError as exc:
                key = f"{t.id} {status_of(exc)}"
                out.refused[key] = out.refused.get(key, 0) + 1
        out.requests += accepted
    return out


def with_rollouts(positions: Positions, rollouts: int, seed: int, screen_to: int = 0) -> None:
    """Asks every request of `positions` for move values by `rollouts` rollouts on one thread
    (none when 0), each position's rollouts seeded from `seed` and its index; with
    `screen_to`, by successive halving down to that many moves (RolloutSettings.screen_to)."""
    if rollouts <= 0:
        return
    for i, request in enumerate(positions.requests):
        request.rollouts.CopyFrom(
            common_pb2.RolloutSettings(
                rollouts=rollouts, seed=(seed * 1_000_003 + i) % 2**64, threads=1, screen_to=screen_to
            )
        )
    positions.source += f", {rollouts} rollouts per move"
    if screen_to > 0:
        positions.source += f" (screened to the best {screen_to})"


def read_positions(path: Path, types: dict[str, common_pb2.GameType]) -> Positions:
    """A JSON list of {"game_type": ID, "position": {the Position message as proto JSON}}."""
    requests = []
    for item in json.loads(path.read_text()):
        t = types[item["game_type"]]
        if not t.position_type:
            raise SystemExit(f"{t.id} has no position evaluator")
        position = json_format.ParseDict(item["position"], message_class(t.position_type)())
        requests.append(service_pb2.EvaluatePositionRequest(game_type=t.id, position=pack(position)))
    return Positions(requests, f"read from {path}")


def write_positions(path: Path, positions: Positions) -> None:
    items = []
    for r in positions.requests:
        cls = message_class(r.position.type_url.rpartition("/")[2])
        items.append(
            {"game_type": r.game_type, "position": json_format.MessageToDict(cls.FromString(r.position.value))}
        )
    path.write_text(json.dumps(items, indent=1))


# ------------------------------------------------------------------------------ units


@dataclass
class Slot:
    """What one worker holds: its match in progress and that match's spectators."""

    index: int
    rng: random.Random
    created: Created[Any, Any, Any] | None = None
    state: Any = None
    moves: int = 0
    # Each move of the match in progress: the seq it was played at and when it was sent. A
    # spectator's update covering that seq is that move's delivery, however late it comes.
    sent: list[tuple[int, float]] = field(default_factory=list)
    spectators: list[asyncio.Task[None]] = field(default_factory=list)
    next_position: int = 0


@dataclass
class Context:
    client: Client
    # The client whose token CreateGame carries: the auditor's when matches are seeded.
    creator: Client
    rec: Recorder
    game: str
    seats: int
    bot: str
    choose: str  # "suggest" or "client"
    positions: Positions | None
    spectators: int
    max_moves: int
    seed: int
    seeded: bool
    matches_created: int = 0
    pacer: Pacer = field(default_factory=Pacer)


async def unit_evaluate(ctx: Context, slot: Slot, started: float) -> None:
    assert ctx.positions is not None
    requests = ctx.positions.requests
    request = requests[(slot.index + slot.next_position) % len(requests)]
    slot.next_position += 1
    client = ctx.client
    await timed(
        ctx.rec,
        "EvaluatePosition",
        lambda: client.call(client.stub.EvaluatePosition, request, client._metadata(client.token), repeatable=False),
        started,
    )


async def _spectate(ctx: Context, game_id: str, sent: list[tuple[int, float]], seen: int) -> None:
    """Watch one match; `sent` is that match's moves, as its player appends them."""
    loop = asyncio.get_running_loop()
    stub = ctx.client.stub
    # In batches, as the web app and the terminal player watch: a server takes only a few
    # streams of one event per response on a match (WATCH_BATCHES_REQUIRED past them).
    call = stub.WatchGame(service_pb2.WatchGameRequest(game_id=game_id, batches=True), metadata=with_game((), game_id))
    try:
        async for response in call:
            now = loop.time()
            for seq, at in sent[bisect.bisect_left(sent, (seen, 0.0)) :]:
                if seq >= response.state.seq:
                    break
                ctx.rec.record("WatchGame", at, now)
            seen = max(seen, response.state.seq)
            if response.state.over:
                return
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - a stream error is a result, counted
        code = getattr(exc, "code", None)
        name = code().name if callable(code) else type(exc).__name__
        if name != "CANCELLED":
            ctx.rec.record("WatchGame", loop.time(), loop.time(), name)
    finally:
        call.cancel()


async def _new_match(ctx: Context, slot: Slot, started: float, watchers: int) -> None:
    # The spectators of a match played to its end stop by themselves once they have seen it
    # all; those of a match cut short are stopped here.
    ended = slot.created is not None and slot.state.over
    if not ended:
        for task in slot.spectators:
            task.cancel()
    slot.spectators = [task for task in slot.spectators if ended and not task.done()]
    n = ctx.matches_created
    ctx.matches_created += 1
    seed = seed_bytes(ctx.seed, ctx.game, n) if ctx.seeded else b""
    # Within the server's creation limit (`pacing`): a refusal is recorded, counted apart from
    # failed units, and the creation sent again when the limit allows; the wait is no move's.
    created = await ctx.pacer.create(
        lambda: timed(ctx.rec, "CreateGame", lambda: ctx.creator.create(ctx.game, ctx.seats, seed=seed), wait=False)
    )
    slot.created, slot.state, slot.moves, slot.sent = created, created.state, 0, []
    for _ in range(watchers):
        slot.spectators.append(asyncio.create_task(_spectate(ctx, created.game_id, slot.sent, created.state.seq)))


async def _move(ctx: Context, slot: Slot, started: float, watchers: int) -> None:
    loop = asyncio.get_running_loop()
    if slot.created is None or slot.state.over or slot.moves >= ctx.max_moves:
        await _new_match(ctx, slot, started, watchers)
        started = loop.time()
    assert slot.created is not None
    handle = slot.created.seats[slot.state.to_act[0]]
    try:
        if ctx.choose == "suggest":
            suggestion = await timed(ctx.rec, "SuggestMove", lambda: handle.suggest(ctx.bot), started)
            action, seq = suggestion.action, suggestion.seq
        else:
            moves = await timed(ctx.rec, "ListLegalMoves", handle.legal_moves, started)
            action, seq = slot.rng.choice(moves.moves), moves.seq
        if slot.sent and slot.sent[-1][0] == slot.state.seq:
            slot.sent.pop()  # a try at this seq that failed
        slot.sent.append((slot.state.seq, loop.time()))
        played = await timed(ctx.rec, "PlayMove", lambda: handle.play(action, expected_seq=seq))
    except errors.TablierError:
        slot.created = None  # start afresh with a new match
        raise
    slot.state = played.state
    slot.moves += 1


async def unit_play(ctx: Context, slot: Slot, started: float) -> None:
    await _move(ctx, slot, started, 0)


async def unit_watch(ctx: Context, slot: Slot, started: float) -> None:
    await _move(ctx, slot, started, ctx.spectators)


UNITS: dict[str, Callable[[Context, Slot, float], Awaitable[None]]] = {
    "evaluate": unit_evaluate,
    "play": unit_play,
    "watch": unit_watch,
}
