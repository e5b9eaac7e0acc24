"""The thin grpc.aio servicer of `tablier.v1.PlayerService` (player accounts): requests in,
`app.players.Players` calls, messages out. Errors are mapped by the same interceptor as
GameService's."""

from __future__ import annotations

from tablier.app import GameApp
from tablier.store.players import PlayerRecord
from tablier.v1 import players_pb2, players_pb2_grpc

from .observe import CallContext, peer_of
from .servicer import credential


def to_player(player: PlayerRecord) -> players_pb2.Player:
    out = players_pb2.Player(
        player_id=player.player_id,
        display_name=player.display_name,
        colour=player.colour,
        external=player.oidc_issuer is not None,
    )
    if player.created_at is not None:
        out.created_at.FromDatetime(player.created_at)
    return out


class PlayerServicer(players_pb2_grpc.PlayerServiceServicer):
    def __init__(self, app: GameApp) -> None:
        self.players = app.players

    async def CreateGuestPlayer(
        self, request: players_pb2.CreateGuestPlayerRequest, context: CallContext
    ) -> players_pb2.CreateGuestPlayerResponse:
        player, token = await self.players.create_guest(request.display_name, peer_of(context))
        return players_pb2.CreateGuestPlayerResponse(player=to_player(player), credential=token)

    async def SignInWithOidc(
        self, request: players_pb2.SignInWithOidcRequest, context: CallContext
    ) -> players_pb2.SignInWithOidcResponse:
        player, token, created = await self.players.sign_in_oidc(
            request.id_token, request.display_name, peer_of(context)
        )
        return players_pb2.SignInWithOidcResponse(player=to_player(player), credential=token, created=created)

    async def GetPlayer(
        self, request: players_pb2.GetPlayerRequest, context: CallContext
    ) -> players_pb2.GetPlayerResponse:
        if request.player_id:
            player = await self.players.get(request.player_id)
        else:
            player = await self.players.me(credential(context))
        return players_pb2.GetPlayerResponse(player=to_player(player))

    async def RenamePlayer(
        self, request: players_pb2.RenamePlayerRequest, context: CallContext
    ) -> players_pb2.RenamePlayerResponse:
        player = await self.players.rename(credential(context), request.display_name)
        return players_pb2.RenamePlayerResponse(player=to_player(player))

    async def RevokeCredential(
        self, request: players_pb2.RevokeCredentialRequest, context: CallContext
    ) -> players_pb2.RevokeCredentialResponse:
        revoked = await self.players.revoke(credential(context), request.all_credentials)
        return players_pb2.RevokeCredentialResponse(revoked=revoked)
