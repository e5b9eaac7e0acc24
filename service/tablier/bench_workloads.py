"""What `tablier bench-service` sends: the planned Qwirkle matches whose moves the local core
decides beforehand from each match's seed (so every PlayMove is one durable move), the
mid-game position EvaluatePosition gets, the long Démocratie match read into the past, the
lanes of calls and the cold rebuild of a match (`tablier.bench` runs them, importing this module
only then: the command line starts without loading the service's messages)."""

from __future__ import annotations

import hashlib
import secrets
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from connectrpc.client import ConnectClient
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from google.protobuf import any_pb2

from tablier.v1 import service_pb2 as pb

if TYPE_CHECKING:
    import grpc

    from tablier.store.base import NewEvent
    from tablier.store.postgres import PostgresStore
    from tablier.v1.service_pb2_grpc import GameServiceStub

GAME = "qwirkle"


def _type_url(game: str, kind: str) -> str:
    """The Any type URL of a game's `Action` or `Position`, as the core registers it."""
    from tablier.app.catalogue import Catalogue

    info = Catalogue().get(game)
    return "type.googleapis.com/" + (info.action_type if kind == "Action" else info.position_type)


SEATS = 2


@dataclass
class PlannedMatch:
    game_id: str
    tokens: list[str]
    moves: list[tuple[int, bytes, int]]  # (seat, action, expected seq)


def _plan_moves(
    seed: bytes, game: str = GAME, seats: int = SEATS, bot: str = "greedy", max_seq: int | None = None
) -> list[tuple[int, bytes, int]]:
    """The moves of a bot self-play match, decided by the local core from the match's seed:
    the server, deciding from the same seed and seqs, writes the same events."""
    from tablier import _core

    match = _core.Match(game, seats, {})
    seq = 0
    for _, payload in match.start(seed, 1):
        match.apply(payload)
        seq += 1
    moves = []
    while not match.is_over() and (max_seq is None or seq < max_seq):
        seat = match.to_act()[0]
        action = match.bot_action(seat, bot, secrets.token_bytes(32), seq + 1)
        moves.append((seat, action, seq))
        for _, payload in match.decide(seat, action, seed, seq + 1):
            match.apply(payload)
            seq += 1
    return moves


def _mid_game_position() -> bytes:
    """A Qwirkle Position: the board and the hand to play after 20 greedy turns."""
    from tablier import _core
    from tablier.v1 import qwirkle_pb2

    seed = bytes(range(32))
    match = _core.Match(GAME, SEATS, {})
    seq = 0
    for _, payload in match.start(seed, 1):
        match.apply(payload)
        seq += 1
    for _ in range(20):
        seat = match.to_act()[0]
        for _, payload in match.decide(seat, match.bot_action(seat, "greedy", seed, seq + 1), seed, seq + 1):
            match.apply(payload)
            seq += 1
    view = qwirkle_pb2.View.FromString(match.view(auditor=True))
    hand = view.seats[match.to_act()[0]].hand_tile_types
    return qwirkle_pb2.Position(board=view.board, hand_types=hand).SerializeToString()


async def _create_planned(stub: GameServiceStub, operator: str, count: int) -> list[PlannedMatch]:
    md = (("authorization", f"Bearer {operator}"),)
    out = []
    for _ in range(count):
        seed = secrets.token_bytes(32)
        created = await stub.CreateGame(pb.CreateGameRequest(game_type=GAME, seats=SEATS, seed=seed), metadata=md)
        out.append(PlannedMatch(created.game_id, list(created.seat_tokens), _plan_moves(seed)))
    return out


async def _long_match(stub: GameServiceStub, operator: str, events: int) -> tuple[str, int]:
    """A 6-player Démocratie match (random bots) played until it holds at least `events`
    events, or to its end."""
    game, seats = "democratie", 6
    while True:  # a match long enough (planning is local and fast)
        seed = secrets.token_bytes(32)
        plan = _plan_moves(seed, game, seats, "random", events)
        if not plan or plan[-1][2] >= events - 40:
            break
    created = await stub.CreateGame(
        pb.CreateGameRequest(game_type=game, seats=seats, seed=seed),
        metadata=(("authorization", f"Bearer {operator}"),),
    )
    action_type = _type_url(game, "Action")
    seq = created.state.seq
    for n, (seat, action, expected) in enumerate(plan):
        played = await stub.PlayMove(
            pb.PlayMoveRequest(
                game_id=created.game_id,
                command_id=f"long-{n}",
                action=any_pb2.Any(type_url=action_type, value=action),
                expected_seq=expected,
            ),
            metadata=(("authorization", f"Bearer {created.seat_tokens[seat]}"),),
        )
        seq = played.state.seq
    return created.game_id, seq


async def _cold_rebuilds(dsn: str, seed_dir: Path, game_id: str, times: int) -> list[float]:
    """Milliseconds to load a match with nothing cached, as a server does (GameApp._load: every
    event read from PostgreSQL and checked), `times` times."""
    from tablier.app import GameApp
    from tablier.seeds import SeedKeys
    from tablier.store import open_store

    store = await open_store(dsn, seed_keys=SeedKeys.from_env(seed_dir))
    out = []
    try:
        for _ in range(times):
            app = GameApp(store)
            started = time.perf_counter()
            await app.repository.load(await app.repository.game(game_id))
            out.append(1000 * (time.perf_counter() - started))
            await app.close()
    finally:
        await store.close()
    return out


async def _echo(call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes], body: bytes) -> bool:
    await call(body)
    return True


async def _resume(stub: GameServiceStub, game_id: str, after: int, upto: int) -> bool:
    """A watch resumed after seq `after`, read until seq `upto` arrived."""
    call = stub.WatchGame(pb.WatchGameRequest(game_id=game_id, after_seq=after, batches=True))
    try:
        async for update in call:
            if update.state.seq >= upto:
                break
    finally:
        call.cancel()
    return True


async def _call(awaitable: Awaitable[object]) -> bool:
    await awaitable
    return True


async def _get_view(stub: GameServiceStub, request: pb.GetViewRequest) -> bool:
    """GetView over gRPC."""
    await stub.GetView(request)
    return True


def _connect_client(url: str) -> ConnectClient:
    """A Connect client speaking as the web app does (binary protobuf, nothing compressed) to
    `tablier serve`'s browser address; its HTTP/1.1 connections are kept alive and reused
    (one per call in flight)."""
    return ConnectClient(url, codec=google_protobuf_binary_codec(), send_compression=None, accept_compression=[])


_GET_VIEW = MethodInfo(
    name="GetView",
    service_name="tablier.v1.GameService",
    input=pb.GetViewRequest,
    output=pb.GetViewResponse,
    idempotency_level=IdempotencyLevel.UNKNOWN,
    stream_type=StreamType.UNARY,
)


async def _connect_get_view(client: ConnectClient, request: pb.GetViewRequest) -> bool:
    """GetView over Connect."""
    await client.execute_unary(request=request, method=_GET_VIEW)
    return True


def _play_lane(stub: GameServiceStub, matches: list[PlannedMatch]) -> Callable[[], Awaitable[bool]]:
    """One PlayMove per call, through the lane's planned matches in order (requests built
    beforehand, as the echo's body is)."""
    calls = iter(
        [
            (
                pb.PlayMoveRequest(
                    game_id=m.game_id,
                    command_id=secrets.token_hex(16),
                    action=any_pb2.Any(type_url=_type_url(GAME, "Action"), value=action),
                    expected_seq=expected,
                ),
                (("authorization", f"Bearer {m.tokens[seat]}"),),
            )
            for m in matches
            for seat, action, expected in m.moves
        ]
    )

    async def one() -> bool:
        item = next(calls, None)
        if item is None:
            return False
        await stub.PlayMove(item[0], metadata=item[1])
        return True

    return one


class SyntheticMatches:
    """Matches of synthetic events (the game "bench") appended to through the store alone, one
    append in flight per match: what a durable write costs with no game in it."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.heads: dict[str, int] = {}
        self.free: list[str] = []

    @staticmethod
    def event(n: int) -> NewEvent:
        from tablier.store.base import NewEvent

        return NewEvent(f"bench_{n}", b"\x08" * 40, 0, "bench", hashlib.sha256(b"%d" % n).digest())

    async def new(self) -> str:
        from tablier.store.base import GameRecord

        record = GameRecord(str(uuid.uuid4()), "bench", 2, {}, secrets.token_bytes(32), (b"a" * 32, b"b" * 32))
        await self.store.create_game(record, [self.event(1)])
        self.heads[record.game_id] = 1
        return record.game_id

    async def append(self, game_id: str) -> None:
        from tablier.store.base import CommandInput

        seq = self.heads[game_id]
        given = CommandInput(seat=0, action=b"\x0a\x02\x08\x01")
        await self.store.append(game_id, seq, [self.event(seq + 1)], secrets.token_hex(16), given)
        self.heads[game_id] = seq + 1

    async def append_one(self) -> None:
        """One append to a match that has none in flight (a new match when all have)."""
        game_id = self.free.pop() if self.free else await self.new()
        try:
            await self.append(game_id)
        finally:
            self.free.append(game_id)


async def _append_groups(dsn: str, sizes: tuple[int, ...] = (1, 4, 8, 16), appends: int = 1600) -> dict[int, float]:
    """PostgreSQL's CPU per append (ms) when `g` appends to `g` matches are in flight together,
    through the store's own append path (`PostgresStore.append`, its group commit): what one
    commit costs, spread over the appends it holds. Synthetic matches, made and left in the
    benchmark's database."""
    import asyncio

    from tablier.benchkit import METER
    from tablier.store.postgres import open_store

    store = await open_store(dsn, monitor=False)
    out: dict[int, float] = {}
    try:
        for g in sizes:
            matches = SyntheticMatches(store)
            games = [await matches.new() for _ in range(g)]
            rounds = max(20, appends // g)
            for i in range(rounds + 10):
                if i == 10:  # after a warm-up: the statements prepared, the pool full
                    before = METER.read().get("database", 0.0)
                await asyncio.gather(*(matches.append(game_id) for game_id in games))
            out[g] = 1000 * (METER.read().get("database", 0.0) - before) / (rounds * g)
    finally:
        await store.close()
    return out
