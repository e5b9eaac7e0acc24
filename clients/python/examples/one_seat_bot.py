"""A bot holding one seat of a Carré match against the server's own bot in the other:
each time the match awaits its seat it picks one of its legal moves (by a rule of your
own; here it walks through the list), until the match is over; then the scores.

    python one_seat_bot.py [HOST:PORT]
"""

import asyncio
import sys

from tablier_client import bot_seat, connect, creator_seat, games


async def main(address: str) -> None:
    async with connect(address) as client:
        created = await client.create(games.CARRE, 0, assignments=[creator_seat(), bot_seat()])
        me = created.seats[0]  # the seat whose token the creator holds
        moves = 0
        async for turn in me.turns():  # waits for this seat's turn, ends with the match
            action = turn.moves[moves % len(turn.moves)]  # a carre_pb2.Action
            await turn.play(action)
            moves += 1
        state = await me.state()
        scores = list(state.outcome.scores) if state.outcome else []
        print(f"{created.game_id}: {moves} moves of mine, over at seq {state.seq}, scores {scores}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051"))
