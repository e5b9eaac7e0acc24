"""`tablier play --mine`: the signed-in player's matches, one line each, newest first, with the
seats named (1-based for people) and what each match waits for."""

from __future__ import annotations

import sys

from .. import errors
from ..sdk import connect
from ..v1 import service_pb2


def describe(g: service_pb2.GameSummary) -> str:
    """One match: its id and game, where it stands for the player, and who sits where."""
    mine = set(g.your_seats)

    def who(seat: int, info: service_pb2.SeatInfo) -> str:
        name = info.player.display_name if info.HasField("player") else ""
        label = name or (f"bot {info.bot}" if info.bot else f"seat {seat + 1}")
        if info.status == service_pb2.SEAT_STATUS_OPEN:
            label += " (open)"
        return label + (" (you)" if seat in mine else "")

    if g.over:
        o = g.outcome
        won = mine & set(o.winners)
        scores = ", ".join(str(s) for s in o.scores)
        where = f"finished, {'you won' if won else 'you lost'} ({scores})"
    else:
        moves = "your move" if mine & set(g.to_act) else "running"
        if g.open_seats:
            where = f"{moves}, waiting for {g.open_seats} more player{'s' if g.open_seats > 1 else ''}"
        else:
            where = moves
    seats = ", ".join(who(i, s) for i, s in enumerate(g.seats))
    return f"{g.game_id}  {g.game_type:<14} {where:<40} {seats}"


async def print_my_matches(server: str, credential: str, tls: bool | None = None) -> int:
    if not credential:
        print("--mine needs --credential (or TABLIER_PLAYER_CREDENTIAL)", file=sys.stderr)
        return 2
    try:
        async with connect(server, tls=tls) as client:
            me = await client.use_credential(credential)
            print(f"Matches of {me.display_name}:")
            token = ""
            while True:
                page, token = await client.my_matches(page_token=token)
                for g in page:
                    print(describe(g))
                if not token:
                    break
    except errors.TablierError as exc:
        print(f"{exc.reason or exc.code.name}: {exc.message}", file=sys.stderr)
        return 1
    return 0
