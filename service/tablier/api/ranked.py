"""The thin grpc.aio servicer of `tablier.v1.RankedService` (ratings, leaderboards, the
matchmaking queue): requests in, `app.ranked` and `app.queue` calls, messages out. Errors are
mapped by the same interceptor as GameService's."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from tablier.app import GameApp
from tablier.app.auth import Credential
from tablier.app.queue import Matched
from tablier.app.ranked import Standing, player_subject
from tablier.v1 import ranked_pb2, ranked_pb2_grpc

from .observe import CallContext
from .servicer import credential


def to_rating(s: Standing) -> ranked_pb2.Rating:
    return ranked_pb2.Rating(
        subject=s.subject,
        display_name=s.display_name,
        mu=s.mu,
        sigma=s.sigma,
        rating=s.rating,
        matches=s.matches,
        rank=s.rank,
    )


class RankedServicer(ranked_pb2_grpc.RankedServiceServicer):
    def __init__(self, app: GameApp) -> None:
        self.app = app

    def streams_of_messages(self) -> dict[str, object]:
        """The browser transport's streams of messages (FindMatch yields messages already)."""
        return {}

    async def _player(self, context: CallContext) -> Credential:
        return await self.app.players.resolve(credential(context))

    async def GetLeaderboard(
        self, request: ranked_pb2.GetLeaderboardRequest, context: CallContext
    ) -> ranked_pb2.GetLeaderboardResponse:
        rows, total = await self.app.leaderboards.leaderboard(request.game_type, request.page, request.page_size)
        return ranked_pb2.GetLeaderboardResponse(ratings=[to_rating(r) for r in rows], total=total)

    async def GetRatingHistory(
        self, request: ranked_pb2.GetRatingHistoryRequest, context: CallContext
    ) -> ranked_pb2.GetRatingHistoryResponse:
        subject = request.subject
        if not subject:
            cred = await self._player(context)
            if cred.player_id is None:
                from tablier.app.errors import Unauthenticated

                raise Unauthenticated(
                    "GetRatingHistory without a subject needs 'authorization: Bearer <player credential>'",
                    "PLAYER_CREDENTIAL_REQUIRED",
                )
            subject = player_subject(cred.player_id)
        current, entries = await self.app.leaderboards.history(request.game_type, subject, request.limit)
        out = ranked_pb2.GetRatingHistoryResponse()
        if current is not None:
            out.current.CopyFrom(to_rating(current))
        for e in entries:
            out.entries.add(seq=e.seq, event=e.event, change=e.change)
        return out

    async def FindMatch(
        self, request: ranked_pb2.FindMatchRequest, context: CallContext
    ) -> AsyncIterator[ranked_pb2.FindMatchResponse]:
        cred = await self._player(context)
        async with contextlib.aclosing(self.app.queue.find(cred, request.game_type, request.seats)) as statuses:
            async for status in statuses:
                if isinstance(status, Matched):
                    yield ranked_pb2.FindMatchResponse(
                        matched=ranked_pb2.QueueMatch(game_id=status.game_id, seat=status.seat, message=status.message)
                    )
                else:
                    yield ranked_pb2.FindMatchResponse(
                        waiting=ranked_pb2.QueueStatus(
                            ticket=status.ticket,
                            waited_seconds=status.waited,
                            rating=status.rating,
                            window=status.window,
                            queued=status.queued,
                            message=status.message,
                        )
                    )

    async def CancelFind(
        self, request: ranked_pb2.CancelFindRequest, context: CallContext
    ) -> ranked_pb2.CancelFindResponse:
        cancelled = await self.app.queue.cancel(await self._player(context), request.ticket)
        return ranked_pb2.CancelFindResponse(cancelled=cancelled)
