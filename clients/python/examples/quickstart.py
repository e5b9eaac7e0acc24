"""Two seats of a Qwirkle match, one picking its first legal move, the other asking the
server's bot, while a spectator watches; then the final scores.

    python quickstart.py [HOST:PORT]
"""

import asyncio
import sys

from tablier_client import connect, games


async def main(address: str) -> None:
    async with connect(address) as client:  # TLS when the server offers it
        for game in await client.game_types():
            print(game.id, [option.name for option in game.options])

        created = await client.create(games.QWIRKLE, seats=2)
        spectator = client.match(created.game_id, games.QWIRKLE)

        async def watch() -> None:
            async for update in spectator.watch():  # resumes by itself if the stream drops
                print(f"seq {update.state.seq}: {update.event.type}")

        watching = asyncio.create_task(watch())
        state = created.state
        while not state.over:
            seat = created.seats[state.to_act[0]]
            if state.to_act[0] == 0:
                action = (await seat.legal_moves()).moves[0]  # a qwirkle_pb2.Action
            else:
                action = (await seat.suggest()).action
            state = (await seat.play(action)).state  # a new command id, retried safely
        await watching
        scores = list(state.outcome.scores) if state.outcome else []
        print("tiles on the board:", len(state.view.board), "scores:", scores)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051"))
